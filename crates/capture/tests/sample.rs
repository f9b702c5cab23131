//! The bundled sample capture: it is exactly what the generator builds (so it never drifts
//! from the codecs), and it holds the frames the README promises.

use lossless_capture::model::Protocol;
use lossless_capture::{CaptureReader, decode_frame};

fn committed() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/captures/sample.pcapng"
    );
    std::fs::read(path).expect("examples/captures/sample.pcapng is committed")
}

#[test]
fn the_committed_sample_is_byte_identical_to_a_fresh_build() {
    let fresh = lossless_capture::sample::sample_pcapng();
    assert!(
        fresh == committed(),
        "examples/captures/sample.pcapng differs from what the generator builds now; if the change is \
         deliberate, run `cargo run -p lossless-capture --example write_sample` and commit the result"
    );
}

#[test]
fn the_sample_holds_pause_pfc_ieee_and_cee_dcbx_and_a_roce_frame() {
    let records: Vec<_> = CaptureReader::new(&committed()[..])
        .map(|f| decode_frame(&f.unwrap()))
        .collect();
    let kinds: Vec<Protocol> = records.iter().map(|r| r.protocol).collect();
    use Protocol::*;
    assert_eq!(kinds, [Roce, Lldp, Lldp, Pause, Pause, Pfc, Pfc, Pfc, Pfc, Pfc]);
    assert_eq!(records[0].roce.as_ref().unwrap().icrc_ok, Some(true));
    assert!(records[1].lldp.as_ref().unwrap().has_dcbx());
    assert!(records[2].lldp.as_ref().unwrap().has_dcbx());
    assert!(
        records.iter().all(|r| r.errors.is_empty()),
        "the sample decodes without errors"
    );
    let warned: Vec<u64> = records
        .iter()
        .filter(|r| !r.warnings.is_empty())
        .map(|r| r.frame)
        .collect();
    assert_eq!(
        warned,
        [10],
        "only the deliberately invalid PFC frame is warned about"
    );
    assert!(
        records[6].eth.as_ref().unwrap().fcs.is_some(),
        "frame 7 was captured with its FCS"
    );
}
