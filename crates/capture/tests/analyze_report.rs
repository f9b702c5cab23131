//! `lossless analyze --report`'s files: the same capture gives the same bytes every time (the
//! frames plot draws one bar per slot in slot order), and the page embeds the analysis text.

use std::io::Cursor;

use lossless_capture::CaptureReader;
use lossless_capture::analyze::{Options, analyze};
use lossless_capture::report::{REPORT_FILES, render, text};
use lossless_proto::units::{Duration, Rate};

fn sample() -> lossless_capture::analyze::Analysis {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/captures/sample.pcapng"
    );
    let bytes = std::fs::read(path).expect("examples/captures/sample.pcapng is committed");
    let opts = Options {
        speed: Rate::from_gbps(100),
        detection: Duration::from_ms(200),
        restoration: Duration::from_ms(200),
        bucket: Duration::from_ms(1),
        dscp_map: None,
    };
    analyze(CaptureReader::new(Cursor::new(bytes)), opts)
}

#[test]
fn the_same_capture_renders_the_same_report_bytes_every_time() {
    let a = sample();
    let first = render(&a, "sample.pcapng").unwrap();
    for _ in 0..8 {
        assert_eq!(render(&a, "sample.pcapng").unwrap(), first);
    }
    let names: Vec<&str> = first.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, [REPORT_FILES[1], REPORT_FILES[2], REPORT_FILES[0]]);
}

#[test]
fn the_frames_plot_draws_one_bar_per_slot_left_to_right() {
    let a = sample();
    let files = render(&a, "sample.pcapng").unwrap();
    let svg = &files[1].1;
    // the bars are the filled rectangles after the background (the first rect)
    let xs: Vec<i64> = svg
        .match_indices("<rect")
        .skip(1)
        .map(|(i, _)| {
            let rest = &svg[i..];
            let x = rest.find(" x=\"").unwrap() + 4;
            rest[x..x + rest[x..].find('"').unwrap()].parse().unwrap()
        })
        .collect();
    let with_frames = a.totals.slots.iter().filter(|s| s.counters.frames > 0).count();
    assert!(
        xs.len() >= with_frames,
        "{} bars for {with_frames} slots with frames",
        xs.len()
    );
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "bars out of order: {xs:?}");
}

#[test]
fn the_page_embeds_the_analysis_text() {
    let a = sample();
    let files = render(&a, "sample.pcapng").unwrap();
    let page = &files[2].1;
    let first_line = text(&a).lines().next().unwrap().to_string();
    assert!(page.contains(&first_line), "{first_line:?} not in the page");
    assert!(page.contains("sample.pcapng"));
}
