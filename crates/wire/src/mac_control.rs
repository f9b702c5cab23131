//! MAC Control frames (EtherType 0x8808): 802.3 PAUSE and 802.1Qbb PFC.
