//! Golden text: `lossless decode` of the bundled sample prints exactly the checked-in
//! `tests/golden/sample.txt`. To change the expected text deliberately, run the test with
//! `LOSSLESS_BLESS=1` and review the diff before committing it.

use std::path::Path;
use std::process::Command;

#[test]
fn text_output_of_the_sample_matches_the_golden_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .current_dir(root.join("../.."))
        .args(["decode", "examples/captures/sample.pcapng"])
        .output()
        .expect("run lossless");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let golden = root.join("tests/golden/sample.txt");
    if std::env::var_os("LOSSLESS_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&golden, &text).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&golden).expect("tests/golden/sample.txt is checked in");
    if text != expected {
        let first = text.lines().zip(expected.lines()).position(|(a, b)| a != b);
        panic!(
            "decode output differs from tests/golden/sample.txt (first differing line: {:?});\n\
             got:\n{text}\nrerun with LOSSLESS_BLESS=1 only if the change is deliberate",
            first.map(|i| i + 1)
        );
    }
}
