//! Writes the bundled sample capture: `cargo run -p lossless-capture --example write_sample`
//! (to `examples/captures/sample.pcapng` at the workspace root, or to the path given).

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let path = std::env::args_os().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/captures/sample.pcapng")
    });
    std::fs::write(&path, lossless_capture::sample::sample_pcapng())?;
    println!("wrote {}", path.display());
    Ok(())
}
