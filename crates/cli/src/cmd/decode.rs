//! `lossless decode`: decode the PAUSE, PFC, LLDP/DCBX, IP/ECN, RoCEv2 (CNP) and 802.1Qau
//! CN-TAG/CNM frames of a pcap or pcapng capture.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use lossless_capture::cn::decode::{CcFieldKind, decode_cc_field};
use lossless_capture::reader::ReadErrorKind;
use lossless_capture::{CaptureReader, Filter, FrameKind, decode_frame, text};
use lossless_files::OutputError;

/// Arguments of `lossless decode`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  lossless decode examples/captures/sample.pcapng
      every frame; PAUSE, PFC and LLDP/DCBX in detail, other frames as one line
  lossless decode --filter pfc,dcbx capture.pcap
      only PFC frames and LLDP frames that carry DCBX TLVs
  lossless decode --json capture.pcapng | jq 'select(.protocol == \"pfc\") | .mac_control.pfc.time'
      one JSON object per frame (JSON lines), for scripts
  lossless decode --filter cnp,ecn roce.pcap
      RoCEv2 CNPs and the packets switches marked CE: who told whom to slow down, and why
  lossless decode --json --filter roce roce.pcap | jq -c '[.roce.bth.opcode_name, .roce.bth.psn, .roce.aeth.nak]'
      the RoCEv2 conversation: data PSNs, ACKs and NAKs (e.g. \"PSN sequence error\")

  lossless decode --cc-field pint --filter roce out/pcap/tor.4-to-r.pcapng
      HPCC-PINT's code in each data packet that a switch port of `lossless sim --pcap` sent

RoCEv2 is recognised by UDP destination port 4791; its ICRC is checked (\"ICRC … (good)\"),
unless the capture cut the packet short. 802.1Qau frames: CN-TAG 0x22E9 after the VLAN tags,
CNM 0x22E7. An IPv4/IPv6 frame that is not RoCEv2 is shown with its IP and UDP headers.

Frames of link types other than Ethernet (LINKTYPE_ETHERNET, 1) are listed as skipped.
A damaged or truncated file is decoded as far as it is sound; the error names the byte offset
(and, in pcapng, the block number) where reading stopped.

Exit status: 0 when the whole file was read and every frame decoded; 1 when a frame had
errors or the file is damaged (a summary goes to stderr); 2 when the file cannot be opened
or is not a pcap/pcapng file, or the command line is wrong.")]
pub struct DecodeArgs {
    /// The capture to read: a pcap (microsecond or nanosecond, either byte order) or pcapng
    /// file; `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print one JSON object per frame (JSON lines) instead of text. Field names are the
    /// standards' (pause_time, priority_enable_vector, willing, tsa, dscp, ecn, dest_qp, psn,
    /// msn, qntz_fb, …).
    #[arg(long)]
    pub json: bool,

    /// Show only frames of these kinds: pause (802.3 PAUSE), pfc (802.1Qbb PFC), lldp (every
    /// LLDP frame), dcbx (LLDP frames with IEEE or CEE DCBX TLVs), roce (every RoCEv2 frame,
    /// CNPs included), cnp (RoCEv2 CNPs), cnm (802.1Qau CNMs), ecn (IP frames marked
    /// Congestion Experienced). Repeat the option or give a comma-separated list; a frame of
    /// any listed kind is shown.
    /// dscp=D (IP frames with DSCP D) and prio=P (frames of priority P: the outer tag's PCP,
    /// untagged 0, or under --trust dscp an IP frame's DSCP's priority) select too.
    #[arg(long, value_name = "KIND", value_delimiter = ',', value_parser = parse_kind)]
    pub filter: Vec<FrameKind>,
    /// What `--filter prio=P` reads a frame's priority from: pcp, or dscp (by --dscp2prio,
    /// default DSCP / 8 as ConnectX).
    #[arg(long, default_value = "pcp", value_parser = ["pcp", "dscp"])]
    pub trust: String,
    /// With --trust dscp: DSCP=PRIORITY entries over the default map, e.g. 26=3,48=6.
    #[arg(long, value_name = "D=P", value_delimiter = ',')]
    pub dscp2prio: Vec<String>,
    /// The congestion-control field that opens the payload of the RoCEv2 data packets (the
    /// HPCC ns-3 fork's field, which `lossless sim --pcap` writes there): int (HPCC's 42-byte INT
    /// records), pint (HPCC-PINT's code, 2 bytes at --pint-log-base 1.01, 1 byte from 1.05),
    /// timely (the 8-byte send time). Nothing in a packet says which.
    #[arg(long, value_name = "FIELD", value_parser = ["int", "pint", "timely"])]
    pub cc_field: Option<String>,
    /// With --cc-field pint: the code's log base (the run's `PINT_LOG_BASE`); it sets the
    /// width and the utilisation b^code / 512 shown.
    #[arg(long, value_name = "B", default_value_t = 1.01)]
    pub pint_log_base: f64,
}

/// `--filter KIND` (the `String` is `lossless_capture`'s `FrameKind::Err`, its message as is).
fn parse_kind(s: &str) -> Result<FrameKind, String> {
    s.parse()
}

/// What reading the capture came to.
#[derive(Debug, Default)]
struct Summary {
    frames: u64,
    shown: u64,
    frames_with_errors: u64,
    /// The numbers of the first frames with errors, for the summary.
    first_error_frames: Vec<u64>,
    file_errors: u64,
    fatal: Option<String>,
}

/// Runs `lossless decode`. Problems that prevent reading at all (the file cannot be opened, is
/// not a capture, or the output cannot be written) are errors, exit status 2; a reader of the
/// output that goes away (`| head`) ends it quietly (both in `main`, as for every command).
pub fn run(args: DecodeArgs) -> anyhow::Result<ExitCode> {
    let cc_field = match args.cc_field.as_deref() {
        None => None,
        Some("int") => Some(CcFieldKind::Int),
        Some("timely") => Some(CcFieldKind::Timestamp),
        _ => match lossless_proto::hpcc_pint::PintCodec::new(args.pint_log_base) {
            Ok(codec) => Some(CcFieldKind::Pint(codec)),
            Err(e) => anyhow::bail!("--pint-log-base: {e}"),
        },
    };
    let name = args.file.display().to_string();
    let input = lossless_files::open_stream(&args.file, "capture")?;
    let mut filter = Filter::new(args.filter.iter().copied());
    if let Some(map) = super::analyze::trust_map(&args.trust, &args.dscp2prio)? {
        filter = filter.trust_dscp(map);
    }
    let stdout = io::stdout().lock();
    let mut out = BufWriter::new(stdout);
    let stdout_error = |source| OutputError {
        path: "-".into(),
        source,
    };
    let summary = match decode_stream(
        BufReader::new(input),
        &name,
        &filter,
        cc_field,
        args.json,
        &mut out,
    ) {
        Ok(s) => s,
        Err(DecodeError::Output(e)) => return Err(stdout_error(e).into()),
        Err(DecodeError::Unusable(msg)) => {
            out.flush().map_err(stdout_error)?;
            anyhow::bail!("{msg}");
        }
    };
    out.flush().map_err(stdout_error)?;
    if summary.frames_with_errors == 0 && summary.file_errors == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    let mut msg = format!(
        "{name}: {} frames read, {} shown, {} with errors",
        summary.frames, summary.shown, summary.frames_with_errors
    );
    if !summary.first_error_frames.is_empty() {
        let list: Vec<String> = summary.first_error_frames.iter().map(u64::to_string).collect();
        let more = if summary.frames_with_errors > list.len() as u64 {
            ", …"
        } else {
            ""
        };
        msg.push_str(&format!(" (frame {}{more})", list.join(", ")));
    }
    if summary.file_errors > 0 {
        msg.push_str(&format!(", {} file errors", summary.file_errors));
    }
    if let Some(f) = &summary.fatal {
        msg.push_str(&format!("; file damaged, reading stopped {f}"));
    }
    errln!("{msg}");
    Ok(ExitCode::from(1))
}

enum DecodeError {
    Output(io::Error),
    Unusable(String),
}

impl From<io::Error> for DecodeError {
    fn from(e: io::Error) -> Self {
        DecodeError::Output(e)
    }
}

fn decode_stream(
    input: impl Read,
    name: &str,
    filter: &Filter,
    cc_field: Option<CcFieldKind>,
    json: bool,
    out: &mut impl Write,
) -> Result<Summary, DecodeError> {
    let mut summary = Summary::default();
    let mut reader = CaptureReader::new(input);
    for item in reader.by_ref() {
        match item {
            Ok(frame) => {
                summary.frames += 1;
                let mut rec = decode_frame(&frame);
                if let Some(kind) = cc_field {
                    decode_cc_field(&frame.data, &mut rec, kind);
                }
                if !filter.accepts(&rec) {
                    continue;
                }
                summary.shown += 1;
                if rec.has_errors() {
                    summary.frames_with_errors += 1;
                    if summary.first_error_frames.len() < 10 {
                        summary.first_error_frames.push(rec.frame);
                    }
                }
                if json {
                    serde_json::to_writer(&mut *out, &rec).map_err(io::Error::from)?;
                    out.write_all(b"\n")?;
                } else {
                    out.write_all(text::render(&rec).as_bytes())?;
                }
            }
            Err(e) => {
                // Nothing was read: the file is not a capture, or the OS failed us.
                let header = e.offset == 0 && summary.frames == 0 && e.fatal;
                if matches!(e.kind, ReadErrorKind::Io(_)) || (header && e.block.is_none()) {
                    return Err(DecodeError::Unusable(format!("{name}: {e}")));
                }
                summary.file_errors += 1;
                if e.fatal {
                    summary.fatal = Some(format!("at byte {}", e.offset));
                }
                let msg = format!("{name}: {e}");
                errln!("error: {msg}");
                if json {
                    let obj = serde_json::json!({
                        "error": msg,
                        "offset": e.offset,
                        "block": e.block,
                        "fatal": e.fatal,
                    });
                    serde_json::to_writer(&mut *out, &obj).map_err(io::Error::from)?;
                    out.write_all(b"\n")?;
                } else {
                    writeln!(out, "error: {msg}")?;
                }
            }
        }
    }
    Ok(summary)
}
