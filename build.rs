//! Link the autoctl binary as a position-dependent executable. It starts on every hook call,
//! tick and shell-loop step; a PIE build spends most of its ~2 ms start in the dynamic loader
//! applying ~45,000 relative relocations and in the page faults they cause (bench/startup.sh:
//! 2.0 ms → 1.4 ms without them). Only the binary is affected: the library and proc macros
//! stay position-independent.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
