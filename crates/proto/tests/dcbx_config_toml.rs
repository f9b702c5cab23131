//! The DCBX configuration as written in TOML: tables left out take their defaults.

use lossless_proto::dcbx::config::{DcbxConfig, EtsConfig, EtsParams, ModeSetting, TsaName};

#[test]
fn ets_with_only_willing_takes_the_default_tables() {
    let c: DcbxConfig = toml::from_str("ets = { willing = true }").unwrap();
    assert!(c.ets.willing);
    assert_eq!(c.ets.params, EtsConfig::default().params);
    assert_eq!(c.ets.params.tcbw, [100, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(c.ets.params.tsa, [TsaName::Ets; 8]);
    assert_eq!(c.validate(), Ok(()));
}

#[test]
fn ets_with_some_tables_defaults_only_the_missing_ones() {
    let c: DcbxConfig = toml::from_str(
        r#"
        mode = "ieee"
        [ets]
        up2tc = [0, 0, 0, 1, 0, 0, 0, 0]
        tcbw = [50, 50, 0, 0, 0, 0, 0, 0]
        "#,
    )
    .unwrap();
    assert_eq!(c.mode, ModeSetting::Ieee);
    assert_eq!(
        c.ets.params,
        EtsParams {
            up2tc: [0, 0, 0, 1, 0, 0, 0, 0],
            tcbw: [50, 50, 0, 0, 0, 0, 0, 0],
            tsa: [TsaName::Ets; 8],
        }
    );
    assert_eq!(c.ets.recommendation, None);
    assert_eq!(c.validate(), Ok(()));
}

#[test]
fn a_recommendation_table_also_defaults_its_missing_tables() {
    let c: DcbxConfig =
        toml::from_str("ets = { recommendation = { tcbw = [100, 0, 0, 0, 0, 0, 0, 0] } }").unwrap();
    assert_eq!(c.ets.recommendation, Some(EtsConfig::default().params));
}

#[test]
fn a_bad_table_value_is_still_an_error() {
    let e = toml::from_str::<DcbxConfig>("ets = { up2tc = [0, 0] }").unwrap_err();
    assert!(
        e.to_string().contains("up2tc") || e.to_string().contains("length"),
        "{e}"
    );
}
