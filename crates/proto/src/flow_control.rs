//! Flow control (802.3 Annex 31B PAUSE and 802.1Qbb PFC): the MAC transmit and receive engines.
