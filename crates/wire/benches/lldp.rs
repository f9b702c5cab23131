//! Throughput of LLDPDU decoding: a PDU with Chassis ID, Port ID, TTL, the four IEEE DCBX
//! TLVs (ETS Configuration, ETS Recommendation, PFC Configuration, Application Priority with
//! four entries) and End. Zero-copy (no allocation) and owned decodes, and emission.
#![allow(missing_docs)] // criterion_main! generates an undocumented `main`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lossless_wire::lldp::*;

fn pdu() -> LldpduRepr {
    let tables = EtsTables {
        priority_tc: [0, 0, 1, 1, 2, 2, 3, 3],
        tc_bandwidth: [25, 25, 25, 25, 0, 0, 0, 0],
        tsa: [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::ETS,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
        ],
    };
    let apps = [
        AppEntry {
            priority: 3,
            reserved: 0,
            selector: 1,
            protocol: 0x8906,
        },
        AppEntry {
            priority: 4,
            reserved: 0,
            selector: 2,
            protocol: 3260,
        },
        AppEntry {
            priority: 5,
            reserved: 0,
            selector: 3,
            protocol: 4791,
        },
        AppEntry {
            priority: 6,
            reserved: 0,
            selector: 5,
            protocol: 26,
        },
    ];
    let org = |t| Tlv::Org(OrgTlv::Ieee8021(t));
    LldpduRepr {
        tlvs: vec![
            Tlv::ChassisId(ChassisId {
                subtype: ChassisIdSubtype::MacAddress,
                id: vec![0, 0x1b, 0x21, 1, 2, 3],
            }),
            Tlv::PortId(PortId {
                subtype: PortIdSubtype::InterfaceName,
                id: b"eth0".to_vec(),
            }),
            Tlv::Ttl(121),
            org(Ieee8021Tlv::EtsConfiguration(EtsConfiguration {
                willing: true,
                cbs: false,
                reserved: 0,
                max_tcs: 0,
                tables,
            })),
            org(Ieee8021Tlv::EtsRecommendation(EtsRecommendation {
                reserved: 0,
                tables,
            })),
            org(Ieee8021Tlv::PfcConfiguration(PfcConfiguration {
                willing: false,
                mbc: false,
                reserved: 0,
                pfc_cap: 8,
                enabled: 0x18,
            })),
            org(Ieee8021Tlv::ApplicationPriority(ApplicationPriority::new(
                0, &apps,
            ))),
            Tlv::End,
        ],
    }
}

/// Nanoseconds this thread has spent on a CPU (Linux scheduler accounting), so a number
/// measured on a loaded machine is still per core; `None` where it cannot be read.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Decodes every TLV without allocating; returns a value depending on all of them.
fn decode_zero_copy(bytes: &[u8]) -> usize {
    let mut n = 0usize;
    let len = Lldpdu::new(bytes).visit(|_, t| {
        if let Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::ApplicationPriority(a))) = t {
            n += a.entries().map(|e| usize::from(e.priority)).sum::<usize>();
        }
        black_box(t);
        n += 1;
    });
    n + len.expect("well-formed")
}

/// The same through the `Lldpdu::tlvs` iterator, which moves each decoded TLV out.
fn decode_iterator(bytes: &[u8]) -> usize {
    let mut n = 0usize;
    for t in Lldpdu::new(bytes).tlvs() {
        let t = t.expect("well-formed");
        if let Tlv::Org(OrgTlv::Ieee8021(Ieee8021Tlv::ApplicationPriority(a))) = &t {
            n += a.entries().map(|e| usize::from(e.priority)).sum::<usize>();
        }
        black_box(&t);
        n += 1;
    }
    n
}

/// Prints the zero-copy decode rate in PDUs per second of this thread's on-CPU time: on a
/// machine busy with other work, wall-clock numbers understate what one core does.
fn on_cpu_rate(bytes: &[u8]) {
    const N: u64 = 5_000_000;
    // Not under `cargo test --all-targets`, which runs benches once without `--bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (Some(cpu0), wall0) = (thread_cpu_ns(), std::time::Instant::now()) else {
        return;
    };
    for _ in 0..N {
        black_box(decode_zero_copy(black_box(bytes)));
    }
    let cpu = thread_cpu_ns().unwrap_or(cpu0).saturating_sub(cpu0).max(1);
    let wall = wall0.elapsed().as_nanos().max(1);
    eprintln!(
        "lldp/decode_zero_copy: {N} PDUs, {:.2} M PDUs/s of on-CPU time ({:.1} ns each), {:.2} M PDUs/s wall",
        N as f64 * 1e3 / cpu as f64,
        cpu as f64 / N as f64,
        N as f64 * 1e3 / wall as f64
    );
}

fn bench(c: &mut Criterion) {
    let repr = pdu();
    let bytes = repr.to_vec().expect("the benchmark PDU fits");
    let mut g = c.benchmark_group("lldp");
    g.throughput(Throughput::Elements(1));
    g.bench_function("decode_zero_copy", |b| {
        b.iter(|| decode_zero_copy(black_box(&bytes)))
    });
    on_cpu_rate(&bytes);
    g.bench_function("decode_iterator", |b| {
        b.iter(|| decode_iterator(black_box(&bytes)))
    });
    g.bench_function("parse_owned", |b| b.iter(|| LldpduRepr::parse(black_box(&bytes))));
    let mut out = vec![0u8; repr.buffer_len()];
    g.bench_function("emit", |b| b.iter(|| black_box(&repr).emit(black_box(&mut out))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
