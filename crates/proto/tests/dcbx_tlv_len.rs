//! TLVs the agents send always fit the 9-bit LLDP length field: configurations that would
//! need longer TLVs are refused up front instead of going out with a wrapped length.

use lossless_proto::dcbx::config::{AppPriority, DcbxConfig, DcbxConfigError, MAX_CEE_APPS, ModeSetting};
use lossless_proto::lldp_agent::{AgentConfig, ConfigError, LldpAgent};
use lossless_proto::units::Instant;
use lossless_wire::ErrorKind;
use lossless_wire::lldp::{LldpduRepr, Tlv};

fn apps(n: usize) -> Vec<AppPriority> {
    (0..n)
        .map(|i| AppPriority {
            selector: 2,
            protocol: 1000 + i as u16,
            priority: 3,
        })
        .collect()
}

#[test]
fn cee_capable_config_accepts_77_cee_apps_and_refuses_78() {
    let mut cfg = DcbxConfig {
        app: apps(MAX_CEE_APPS),
        ..DcbxConfig::default()
    };
    assert_eq!(cfg.validate(), Ok(()));
    cfg.app = apps(MAX_CEE_APPS + 1);
    assert!(
        matches!(cfg.validate(), Err(DcbxConfigError::Value { field: "app", .. })),
        "{:?}",
        cfg.validate()
    );
    cfg.mode = ModeSetting::Cee;
    assert!(cfg.validate().is_err());
    cfg.mode = ModeSetting::Ieee;
    assert_eq!(cfg.validate(), Ok(()), "the IEEE TLV holds up to 166 entries");
}

#[test]
fn lldp_agent_refuses_a_system_name_over_255_bytes() {
    let mut cfg = AgentConfig::new([2, 0, 0, 0, 0, 1]);
    cfg.system_name = Some("s".repeat(255));
    assert!(LldpAgent::new(cfg.clone()).is_ok());
    cfg.system_name = Some("s".repeat(256));
    assert_eq!(LldpAgent::new(cfg).err(), Some(ConfigError::SystemName(256)));
}

#[test]
fn lldp_agent_refuses_local_tlvs_over_511_bytes_and_keeps_the_old_ones() {
    let mut a = LldpAgent::new(AgentConfig::new([2, 0, 0, 0, 0, 1])).unwrap();
    let ok = vec![Tlv::SystemDescription(vec![b'd'; 511])];
    assert_eq!(a.set_local_tlvs(Instant::ZERO, ok.clone()), Ok(()));
    let e = a
        .set_local_tlvs(Instant::ZERO, vec![Tlv::SystemDescription(vec![b'd'; 512])])
        .unwrap_err();
    assert_eq!((e.context, e.field), ("System Description TLV", "length"));
    assert_eq!(
        e.kind,
        ErrorKind::BadLength {
            found: 512,
            allowed: "0..=511"
        }
    );
    assert_eq!(a.local_tlvs(), &ok[..]);
    let frame = a.poll_transmit(Instant::ZERO).expect("fast start sends at once");
    let d = LldpduRepr::parse(&frame[14..]);
    assert_eq!(d.error, None);
    assert!(d.tlvs.contains(&ok[0]));
}

#[test]
fn the_cee_tlv_with_77_apps_is_exactly_511_bytes() {
    use lossless_proto::dcbx::cee::{self, Flags, Handshake};
    use lossless_wire::lldp::{CeeTlv, OrgTlv};
    let cfg = DcbxConfig {
        app: apps(MAX_CEE_APPS),
        ..DcbxConfig::default()
    };
    let features = cee::features(&cfg, Flags::default());
    let t = Tlv::Org(OrgTlv::Cee(CeeTlv::Dcbx(cee::tlv(&Handshake::new(), &features))));
    assert_eq!(t.value_len(), 511);
    assert_eq!(t.check_len(), Ok(()));
}
