//! Frames as the simulator carries them: small `Copy` handles, never bytes. Bytes are built
//! only by sinks that need them (a pcap writer).

/// Index of a port in the simulation (all ports of all nodes, numbered from 0).
pub type PortId = u32;
/// Index of a node (host or switch).
pub type NodeId = u32;
/// Index of a flow.
pub type FlowId = u32;

/// "No port": the frame was generated on this node.
pub const NO_PORT: PortId = u32::MAX;

/// A data frame in flight or queued: a handle with everything the model needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Unique, increasing with injection order.
    pub id: u64,
    /// The flow this frame belongs to.
    pub flow: FlowId,
    /// Ethernet frame length in bytes, header and FCS included (no preamble or IFG).
    pub len: u32,
    /// 802.1Q priority code point (0..=7).
    pub priority: u8,
    /// Port the frame entered the current node by, [`NO_PORT`] at its source host.
    pub ingress: PortId,
    /// Source host.
    pub src: NodeId,
    /// Destination host.
    pub dst: NodeId,
    /// Switches the frame has entered so far (its hop limit counter; the index of its hop
    /// on its flow's path: 0 in the source NIC, 1 at the first switch).
    pub hops: u8,
}

/// Why a frame was dropped. Every drop has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// A lossy priority found its ingress threshold or the shared buffer full (tail drop).
    TailDrop,
    /// A lossless priority overflowed its headroom reserve: the configuration is wrong.
    HeadroomOverflow,
    /// A lossless priority arrived with flow control off and no shared buffer left.
    BufferFull,
    /// A receiving host's input buffer was full.
    ReceiverOverflow,
    /// A switch had no route to the destination.
    NoRoute,
    /// The frame entered more switches than the hop limit allows (a routing loop).
    HopLimit,
    /// The frame was on a link that went down, queued at one of its ports, or routed to it.
    LinkDown,
    /// A PFC watchdog's drop action discarded it (its queue or ingress priority group was
    /// in a storm).
    Pfcwd,
}

impl DropReason {
    /// All reasons, in reporting order.
    pub const ALL: [DropReason; 8] = [
        DropReason::TailDrop,
        DropReason::HeadroomOverflow,
        DropReason::BufferFull,
        DropReason::ReceiverOverflow,
        DropReason::NoRoute,
        DropReason::HopLimit,
        DropReason::LinkDown,
        DropReason::Pfcwd,
    ];
    /// The name used in reports and JSON keys.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::TailDrop => "tail_drop",
            DropReason::HeadroomOverflow => "headroom_overflow",
            DropReason::BufferFull => "buffer_full",
            DropReason::ReceiverOverflow => "receiver_overflow",
            DropReason::NoRoute => "no_route",
            DropReason::HopLimit => "hop_limit",
            DropReason::LinkDown => "link_down",
            DropReason::Pfcwd => "pfcwd",
        }
    }
    /// Index into per-reason counter arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
}
