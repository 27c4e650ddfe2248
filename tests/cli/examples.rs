//! The examples under `examples/` run as users would run them.

use crate::util::{Sandbox, stdout};

/// `examples/loop.sh` finds an installed autoctl on PATH (AUTOCTL unset) and walks a whole
/// loop; its `autoctl` shell function must call the binary, never itself.
#[test]
fn the_loop_example_runs_with_autoctl_on_path() {
    let sb = Sandbox::new();
    let bin_dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(crate::util::bin(), bin_dir.path().join("autoctl")).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.path().display(),
        std::env::var("PATH").unwrap()
    );
    for autoctl in [None, Some("autoctl")] {
        let mut cmd = sb.program(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/loop.sh"));
        cmd.env("PATH", &path).env_remove("AUTOCTL");
        if let Some(name) = autoctl {
            cmd.env("AUTOCTL", name);
        }
        let out = cmd.output().unwrap();
        let text = stdout(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("iteration  7  report"), "{text}");
        assert!(text.contains("loop complete after 8 iterations"), "{text}");
    }
}
