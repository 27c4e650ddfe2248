//! `autoctl schema list|show`: the embedded JSON Schemas of the protocol files.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use crate::error::Exit;
use crate::output;
use crate::schema::{self, SCHEMAS};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SchemaCommand {
    /// List the schemas: name, file, what it describes
    List,
    /// Print one schema (draft 2020-12 JSON)
    Show(ShowArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The schema name, as `schema list` prints it
    #[arg(value_name = "NAME")]
    pub name: String,
}

pub fn run(command: SchemaCommand) -> Result<Exit> {
    match command {
        SchemaCommand::List => {
            for schema in SCHEMAS {
                output::line(format_args!(
                    "{}\t{}\t{}",
                    schema.name, schema.file, schema.describes
                ))?;
            }
        }
        SchemaCommand::Show(args) => match schema::find(&args.name) {
            Some(schema) => output::raw(schema.text.as_bytes())?,
            None => bail!(
                "no schema named {:?} (known: {})",
                args.name,
                SCHEMAS
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
    Ok(Exit::Yes)
}
