//! `lossless analyze --report DIR` on the sample capture: the page (askama template) shows
//! the same per-priority figures as `--json`, links only its two SVG plots beside it (no
//! network), and escapes a hostile capture file name.

use std::path::Path;
use std::process::Command;

use lossless_testkit::temp_dir;
use serde_json::Value;

#[test]
fn the_report_page_matches_the_json_and_escapes_the_file_name() {
    let dir = temp_dir("analyze-report");
    // a file name that would be markup if it were written as is ('/' cannot be in a name)
    let file = dir.join("<script>alert('x')<script>&.pcapng");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/captures/sample.pcapng"),
        &file,
    )
    .expect("copy the sample capture");
    let report = dir.join("report");
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["analyze", "--speed", "100G", "--json", "--report"])
        .arg(&report)
        .arg(&file)
        .output()
        .expect("run lossless analyze");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let html = std::fs::read_to_string(report.join("index.html")).expect("index.html");

    assert!(!html.contains("<script"), "{html}");
    assert!(html.contains("<title>lossless analyze: "), "{html}");
    assert!(
        html.contains("&#60;script&#62;alert(&#39;x&#39;)&#60;script&#62;&#38;.pcapng</h1>"),
        "{html}"
    );
    // nothing to fetch: the two plots are files beside the page
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<link"));
    let imgs: Vec<&str> = html.split("<img src=\"").skip(1).collect();
    assert_eq!(imgs.len(), 2);
    for (img, svg) in imgs.iter().zip(["frames.svg", "paused.svg"]) {
        assert!(img.starts_with(&format!("{svg}\"")), "{img}");
        let s = std::fs::read_to_string(report.join(svg)).expect("svg written");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{svg}");
    }
    // one row per slot with the JSON's figures
    let slots = json["totals"]["slots"].as_array().expect("slots");
    assert_eq!(slots.len(), 9);
    for s in slots {
        let row = format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.6}</td><td>{}</td></tr>",
            s["slot"].as_str().unwrap(),
            s["frames"],
            s["xoff_frames"],
            s["xon_frames"],
            s["xoff_transitions"],
            s["xon_transitions"],
            s["paused_s"].as_f64().unwrap(),
            s["storms_detected"]
        );
        assert!(html.contains(&row), "no row {row} in {html}");
    }
    // the text summary is there too, escaped (the DCBX line's "<->")
    assert!(html.contains("&#60;-&#62;"), "{html}");
}
