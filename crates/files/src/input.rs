//! Inputs: files read whole (bounded, regular files only) and streams (captures).

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What the file is for (e.g. "scenario", "cdf_file").
        what: String,
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The path is not a regular file.
    #[error("{what} {}: is {kind}, not a regular file", path.display())]
    NotRegular {
        /// What the file is for.
        what: String,
        /// The file.
        path: PathBuf,
        /// What it is instead ("a directory", "a FIFO", "a character device", ...).
        kind: &'static str,
    },
    /// The file is larger than allowed.
    #[error("{what} {}: larger than the {limit} bytes allowed", path.display())]
    TooLarge {
        /// What the file is for.
        what: String,
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
}

fn kind_of(ft: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads the whole of `path`, a regular file of at most `limit` bytes; `what` names the
/// file's role in errors. The file type is checked on the opened file (no race with a
/// rename), and the read stops one byte past `limit` even if the file grows meanwhile.
pub fn read_input(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, InputError> {
    let io_err = |source| InputError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    };
    // a FIFO would block in open(2) until a writer appears: look before opening
    let meta = fs::metadata(path).map_err(io_err)?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular {
            what: what.to_string(),
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
    let file = File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular {
            what: what.to_string(),
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
    let too_large = || InputError::TooLarge {
        what: what.to_string(),
        path: path.to_path_buf(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(io_err)?;
    if buf.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(buf)
}

/// [`read_input`] for a text file: refuses bytes that are not UTF-8, naming the offset.
pub fn read_input_text(path: &Path, what: &str, limit: u64) -> Result<String, InputError> {
    let bytes = read_input(path, what, limit)?;
    String::from_utf8(bytes).map_err(|e| InputError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        ),
    })
}

/// Opens an input read as a stream (a capture): `-` is standard input; a regular file, a FIFO
/// or a character device is opened; a directory, a socket or a block device is refused. There
/// is no size limit, since the reader never holds the stream whole.
pub fn open_stream(path: &Path, what: &str) -> Result<Box<dyn Read + Send>, InputError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin()));
    }
    let io_err = |source| InputError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    };
    let meta = fs::metadata(path).map_err(io_err)?;
    let ft = meta.file_type();
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_dir() || ft.is_socket() || ft.is_block_device() {
            return Err(InputError::NotRegular {
                what: what.to_string(),
                path: path.to_path_buf(),
                kind: kind_of(&ft),
            });
        }
    }
    Ok(Box::new(File::open(path).map_err(io_err)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{Scratch, mkfifo};

    #[test]
    fn a_character_device_is_refused_before_any_read() {
        let e = read_input(Path::new("/dev/zero"), "scenario", 1 << 20).unwrap_err();
        assert!(
            matches!(
                e,
                InputError::NotRegular {
                    kind: "a character device",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "scenario /dev/zero: is a character device, not a regular file"
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = Scratch::new("fifo");
        let p = d.path().join("f");
        mkfifo(&p);
        let e = read_input(&p, "cdf_file", 100).unwrap_err();
        assert!(matches!(e, InputError::NotRegular { kind: "a FIFO", .. }), "{e}");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_one_at_the_limit_read() {
        let d = Scratch::new("limit");
        let p = d.path().join("x");
        fs::write(&p, vec![b'a'; 10]).unwrap();
        assert_eq!(read_input(&p, "x", 10).unwrap().len(), 10);
        let e = read_input(&p, "x", 9).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 9, .. }), "{e}");
    }

    #[test]
    fn text_that_is_not_utf8_names_the_byte() {
        let d = Scratch::new("utf8");
        let p = d.path().join("x");
        fs::write(&p, b"ab\xffcd").unwrap();
        let e = read_input_text(&p, "scenario", 100).unwrap_err();
        assert!(e.to_string().ends_with("not UTF-8 text (byte 2)"), "{e}");
    }

    #[test]
    fn a_stream_may_be_a_fifo_or_a_device_but_not_a_directory() {
        let d = Scratch::new("stream");
        assert!(open_stream(Path::new("/dev/null"), "capture").is_ok());
        let e = open_stream(d.path(), "capture").err().unwrap();
        assert!(
            e.to_string().ends_with("is a directory, not a regular file"),
            "{e}"
        );
        let e = open_stream(&d.path().join("missing"), "capture").err().unwrap();
        assert!(matches!(e, InputError::Io { .. }), "{e}");
    }
}
