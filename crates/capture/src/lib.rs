//! Capture tools: read pcap and pcapng files and decode the MAC Control, LLDP and DCBX
//! frames in them into text and JSON.
