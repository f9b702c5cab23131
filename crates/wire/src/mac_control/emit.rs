//! [`emit_frame`]: a whole 60- or 64-byte MAC Control frame built into a buffer.

use super::*;
use crate::ethernet::{EtherType, EthernetAddress, EthernetRepr, HEADER_LEN, VlanTags};
use crate::fcs::{self, FcsMode};
use crate::{Error, Result};

/// Builds an untagged MAC Control frame from `src` to `dst` in `buf`: header, payload, zero
/// padding to 60 bytes and, in [`FcsMode::Present`], the FCS. Returns 60 or 64.
pub fn emit_frame(
    src: EthernetAddress,
    dst: EthernetAddress,
    control: &MacControlRepr,
    fcs: FcsMode,
    buf: &mut [u8],
) -> Result<usize> {
    let need = fcs.min_frame_len();
    if buf.len() < need {
        return Err(Error::truncated(0, CTX, "buffer", need, buf.len()));
    }
    let eth = EthernetRepr {
        dst,
        src,
        tags: VlanTags::Untagged,
        ethertype: EtherType::MAC_CONTROL,
    };
    let at = eth.emit(buf)?;
    debug_assert_eq!(at, HEADER_LEN);
    let n = control.emit(&mut buf[at..]).map_err(|e| e.at(at))?;
    fcs::finish(buf, at + n, fcs)
}
