//! The AF_PACKET socket: clear errors naming the interface, and frames of any EtherType sent
//! and received over a veth pair (root only; skipped loudly otherwise).

use std::process::Command;
use std::time::{Duration, Instant};

use lossless_live::{LiveError, RawSocket};

/// A veth pair in this network namespace, deleted on drop even when the test fails.
struct Veth {
    a: String,
    b: String,
}

impl Veth {
    fn new(tag: &str, up: bool) -> Veth {
        let pid = std::process::id();
        let v = Veth {
            a: format!("lr{tag}{pid}a"),
            b: format!("lr{tag}{pid}b"),
        };
        let ip = |args: &[&str]| {
            let st = Command::new("ip").args(args).status().expect("run ip");
            assert!(st.success(), "ip {args:?}");
        };
        ip(&["link", "add", &v.a, "type", "veth", "peer", "name", &v.b]);
        if up {
            ip(&["link", "set", &v.a, "up"]);
            ip(&["link", "set", &v.b, "up"]);
        }
        v
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.a]).status();
    }
}

#[test]
fn missing_interface_is_named_in_the_error() {
    let e = RawSocket::open("nosuchif0", 0x88cc).unwrap_err();
    assert!(matches!(e, LiveError::NoSuchInterface { .. }), "{e:?}");
    assert!(e.to_string().contains("nosuchif0"), "{e}");
}

#[test]
fn invalid_interface_names_are_rejected() {
    for name in ["", "a-name-longer-than-15", "nul\0x"] {
        let e = RawSocket::open(name, 0x88cc).unwrap_err();
        assert!(matches!(e, LiveError::BadName { .. }), "{name:?}: {e:?}");
    }
}

#[test]
fn down_interface_is_named_in_the_error() {
    if !lossless_testkit::require_root("down_interface_is_named_in_the_error") {
        return;
    }
    let v = Veth::new("d", false);
    let e = RawSocket::open(&v.a, 0x88cc).unwrap_err();
    assert!(matches!(e, LiveError::InterfaceDown { .. }), "{e:?}");
    assert!(
        e.to_string().contains(&v.a) && e.to_string().contains("down"),
        "{e}"
    );
}

fn recv_within(s: &RawSocket, buf: &mut [u8], limit: Duration) -> Option<usize> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if let Some(r) = s.recv(buf, Duration::from_millis(50)).unwrap() {
            return Some(r.len);
        }
    }
    None
}

#[test]
fn frames_of_the_bound_ethertype_cross_a_veth_pair_and_others_do_not() {
    if !lossless_testkit::require_root("frames_of_the_bound_ethertype_cross_a_veth_pair_and_others_do_not") {
        return;
    }
    let v = Veth::new("x", true);
    let a = RawSocket::open(&v.a, 0x88b5).unwrap();
    let b = RawSocket::open(&v.b, 0x88b5).unwrap();
    assert_eq!(b.ethertype(), 0x88b5);
    a.join_multicast([0x01, 0x80, 0xc2, 0, 0, 0x0e]).unwrap();
    let mcast = std::fs::read_to_string("/proc/net/dev_mcast").unwrap();
    assert!(
        mcast
            .lines()
            .any(|l| l.contains(&v.a) && l.contains("0180c200000e")),
        "PACKET_ADD_MEMBERSHIP joined 01-80-C2-00-00-0E: {mcast}"
    );
    let mut other = vec![0xff; 6];
    other.extend_from_slice(&a.mac());
    other.extend_from_slice(&[0x88, 0xb6]);
    other.resize(60, 0x11);
    a.send(&other).unwrap();
    let mut frame = vec![0xff; 6];
    frame.extend_from_slice(&a.mac());
    frame.extend_from_slice(&[0x88, 0xb5]);
    frame.extend((0..50u8).map(|i| i ^ 0x5a));
    a.send(&frame).unwrap();
    let mut buf = [0u8; 2048];
    let n = recv_within(&b, &mut buf, Duration::from_secs(2)).expect("frame within 2 s");
    assert_eq!(&buf[..n], &frame[..], "first frame received is the 0x88B5 one");
    assert_eq!(
        recv_within(&b, &mut buf, Duration::from_millis(200)),
        None,
        "nothing else arrives"
    );
    // The sender does not see its own frame.
    assert_eq!(recv_within(&a, &mut buf, Duration::from_millis(200)), None);
}
