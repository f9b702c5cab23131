//! The 802.1AB statistics counters of one agent (802.1AB-2009 9.2.6).

use serde::Serialize;

/// 802.1AB agent statistics, as lldpad's `lldptool -S` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Statistics {
    /// statsFramesOutTotal: LLDPDUs transmitted (shutdown LLDPDUs included).
    pub frames_out_total: u64,
    /// statsFramesInTotal: LLDPDUs received, valid or not.
    pub frames_in_total: u64,
    /// statsFramesDiscardedTotal: LLDPDUs discarded (errors, or no room for a new neighbour).
    pub frames_discarded_total: u64,
    /// statsFramesInErrorsTotal: LLDPDUs with a detectable error (bad mandatory TLVs or framing).
    pub frames_in_errors_total: u64,
    /// statsTLVsDiscardedTotal: optional TLVs discarded because they could not be decoded.
    pub tlvs_discarded_total: u64,
    /// statsTLVsUnrecognizedTotal: TLVs of a reserved type or an unknown OUI/subtype.
    pub tlvs_unrecognized_total: u64,
    /// statsAgeoutsTotal: neighbours deleted because their TTL ran out.
    pub ageouts_total: u64,
    /// DCBX TLVs of the peer refused because a value is out of range, counted for every
    /// LLDPDU that carries one (filled by the DCBX agent; 0 from a bare LLDP agent).
    pub dcbx_tlvs_rejected_total: u64,
}
