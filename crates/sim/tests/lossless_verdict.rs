//! A lossless class that drops a frame is a finding, never a quiet counter: the report's
//! `lossless` verdict says how many frames, where, when first and why (for a headroom
//! overflow: the headroom it had against what Annex N asks for that port), the summary opens
//! with it, the HTML report shows it at its top; a run without such a drop says "lossless".

mod common;

use common::{load, run, set_headroom};
use lossless_sim::trace::html::HtmlReport;
use lossless_sim::{Report, Simulator};

#[test]
fn an_undersized_headroom_is_a_finding_with_its_place_time_and_the_headroom_it_lacked() {
    let mut c = load("incast", &["senders=16"], None);
    set_headroom(&mut c, 2_000);
    let r = run(c);
    let v = &r.lossless;
    assert_eq!(v.verdict, "dropped");
    assert!(v.dropped_frames > 0);
    assert_eq!(v.dropped_frames, r.lossless_drops());
    let d = &v.drops[0];
    assert_eq!((d.reason, d.priority), ("headroom_overflow", 3));
    assert_eq!(d.node, "tor", "the switch whose ingress overflowed");
    assert_eq!(d.headroom_bytes, Some(2_000));
    let annex = d.annex_n_headroom_bytes.expect("Annex N's figure");
    assert!(annex > 2_000, "Annex N asks for more: {annex}");
    assert!(d.first_ps.is_some());
    assert!(d.why.contains("short of Annex N"), "{}", d.why);
    // the drops add up, most frames first
    assert_eq!(v.drops.iter().map(|d| d.frames).sum::<u64>(), v.dropped_frames);
    assert!(v.drops.windows(2).all(|w| w[0].frames >= w[1].frames));
    // the summary's second line is the finding
    let s = r.summary();
    let second = s.lines().nth(1).unwrap();
    assert!(
        second.starts_with(&format!("FINDING: {} frame(s)", v.dropped_frames)),
        "{s}"
    );
    assert!(
        s.lines()
            .nth(2)
            .unwrap()
            .contains("headroom overflow: 2000 B of headroom")
    );
    // and the JSON carries it near the top
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["lossless"]["verdict"], "dropped");
    assert_eq!(json["lossless"]["drops"][0]["reason"], "headroom_overflow");
}

#[test]
fn a_run_that_keeps_its_lossless_classes_says_so_and_opens_with_no_finding() {
    let r = run(load("incast", &["senders=16"], None));
    assert_eq!(r.lossless.verdict, "lossless");
    assert_eq!(r.lossless.dropped_frames, 0);
    assert!(r.lossless.drops.is_empty());
    assert!(!r.summary().contains("FINDING"));
}

#[test]
fn a_priority_whose_pfc_dcbx_left_off_counts_as_lossless_when_it_drops() {
    // dcbx-disagree: the host's own DCBX enables PFC on priority 3; the peers disagree, PFC is
    // not operational, and priority 3 is tail-dropped at the switch
    let r = run(load("dcbx-disagree", &[], None));
    assert_eq!(r.lossless.verdict, "dropped");
    let d = &r.lossless.drops[0];
    assert_eq!(d.reason, "pfc_not_operational");
    assert_eq!(d.priority, 3);
    assert!(d.why.contains("DCBX"), "{}", d.why);
}

#[test]
fn the_html_report_opens_with_the_finding() {
    let mut c = load("incast", &["senders=16"], None);
    set_headroom(&mut c, 2_000);
    let html = HtmlReport::new(&c);
    let mut sim = Simulator::with_observer(c, html).unwrap();
    sim.run();
    let r = Report::collect(&sim);
    let end = sim.now();
    let page = sim.observer_mut().render(end, &r);
    let finding = page
        .find("<section id=\"lossless-finding\"")
        .expect("the finding section");
    assert_eq!(
        page.find("<section id=\""),
        Some(finding),
        "the finding comes before every plot"
    );
    assert!(page.contains("frame(s) of lossless priorities were dropped"));
    assert!(page.contains("short of Annex N"));
}
