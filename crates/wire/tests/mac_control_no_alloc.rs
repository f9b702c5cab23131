//! Decoding and validating PAUSE/PFC frames, and emitting them, never touches the heap.

use lossless_testkit::alloc_count::{CountingAlloc, thread_allocations};
use lossless_wire::ethernet::EthernetAddress;
use lossless_wire::fcs::FcsMode;
use lossless_wire::mac_control::{MacControlRepr, decode_frame, emit_frame};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[test]
fn decoding_validating_and_emitting_allocate_nothing() {
    let src = EthernetAddress([0x00, 0x1b, 0x21, 1, 2, 3]);
    let reprs = [
        MacControlRepr::Pause { pause_time: 0xFFFF },
        MacControlRepr::Pfc {
            priority_enable_vector: 0x01FF,
            time: [7; 8],
        },
        MacControlRepr::pfc_xon(0x80),
    ];
    let mut buf = [0u8; 64];
    let before = thread_allocations();
    let mut seen = 0u32;
    for mode in [FcsMode::Present, FcsMode::Absent] {
        for r in &reprs {
            for dst in [EthernetAddress::MAC_CONTROL, src] {
                let n = emit_frame(src, dst, r, mode, &mut buf).unwrap();
                let f = decode_frame(&buf[..n], mode, Some(src)).unwrap();
                seen += u32::from(f.warnings.bits()) + u32::from(f.control == *r);
            }
        }
    }
    assert_eq!(thread_allocations(), before, "the heap was used");
    assert!(seen >= 12, "every frame decoded to its repr");
}
