//! Entry point: hand the arguments to the library and exit with the code it chose.

fn main() -> std::process::ExitCode {
    autoctl::run(std::env::args_os())
}
