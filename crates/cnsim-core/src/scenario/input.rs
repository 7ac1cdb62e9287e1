//! Reading a scenario file: what is refused before a byte is read.
//!
//! A scenario is a small text file. Anything else (a device, a FIFO, a
//! directory, a file of many megabytes) is refused with the reason before
//! it is read, so that `/dev/zero` cannot exhaust memory and a FIFO without
//! a writer cannot block. The Python package reads files through this too.

use super::error::ScenarioError;
use std::io::Read;
use std::path::Path;

/// Largest scenario file read: 16 MiB. The largest shipped scenario is
/// under 4 KB and even a k = 16 fat tree written out entry by entry stays
/// under 1 MB; the bound keeps parsing to seconds and memory to a few GB.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileErrorKind {
    NotFound,
    /// Refused before reading, or the read failed.
    Refused,
    /// Read, but not UTF-8 text.
    NotText,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct FileError {
    pub kind: FileErrorKind,
    pub error: ScenarioError,
}

impl From<FileError> for ScenarioError {
    fn from(e: FileError) -> Self {
        e.error
    }
}

fn refused(kind: FileErrorKind, origin: &str, message: String) -> FileError {
    FileError {
        kind,
        error: ScenarioError {
            origin: origin.to_string(),
            line_col: None,
            field: String::new(),
            message,
        },
    }
}

/// The text of the scenario file at `path`; every error names the path.
pub fn read_file(path: &Path) -> Result<String, FileError> {
    let origin = path.display().to_string();
    let fail = |kind, message: String| refused(kind, &origin, message);
    let io_reason = |e: &std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => (FileErrorKind::NotFound, "no such file".to_string()),
        std::io::ErrorKind::PermissionDenied => {
            (FileErrorKind::Refused, "permission denied".to_string())
        }
        _ => (FileErrorKind::Refused, format!("cannot read the file: {e}")),
    };
    // `metadata` does not open the file: a FIFO is not waited on.
    let meta = std::fs::metadata(path).map_err(|e| {
        let (kind, msg) = io_reason(&e);
        fail(kind, msg)
    })?;
    if meta.is_dir() {
        return Err(fail(
            FileErrorKind::Refused,
            "is a directory, not a scenario file".into(),
        ));
    }
    if !meta.is_file() {
        return Err(fail(
            FileErrorKind::Refused,
            "is not a regular file (a device, FIFO or socket); give a scenario file".into(),
        ));
    }
    let too_large = |size: &str| {
        fail(
            FileErrorKind::Refused,
            format!("file too large ({size}); scenario files are limited to 16 MiB ({MAX_FILE_BYTES} bytes)"),
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(&format!("{} bytes", meta.len())));
    }
    // Files whose size the system does not know (/proc) are read up to the
    // limit only.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| {
            let (kind, msg) = io_reason(&e);
            fail(kind, msg)
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large("more than the limit"));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let good = String::from_utf8_lossy(&e.as_bytes()[..at]);
        let line = good.matches('\n').count() + 1;
        let col = good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        FileError {
            kind: FileErrorKind::NotText,
            error: ScenarioError {
                origin: origin.clone(),
                line_col: Some((line, col)),
                field: String::new(),
                message: format!(
                    "expected UTF-8 text, found the byte 0x{:02X}",
                    e.as_bytes()[at]
                ),
            },
        }
    })
}
