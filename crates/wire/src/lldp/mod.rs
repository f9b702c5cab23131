//! LLDP (802.1AB) PDUs and TLVs, with the 802.1/802.3 organisational TLVs and DCBX.
