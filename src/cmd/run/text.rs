//! What `run watch` and `run status` print for a person at a terminal: one line per decision
//! (time, session, decision, the reasons in words), and a table aligned in columns. Piped,
//! the same commands print JSON lines and tab-separated rows, which scripts read.

use std::io::IsTerminal;

use clap::ValueEnum;

use crate::supervise::tick::TickEvent;

/// How `run watch` prints its decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventFormat {
    /// One line per decision: time, session, decision, the reasons in words (a decision
    /// repeated with the same reasons is shown once)
    Text,
    /// One JSON object per decision (JSON Lines; schema: autoctl schema show tick-event)
    Json,
}

impl EventFormat {
    /// The format asked for, else text on a terminal and JSON when stdout is piped.
    pub fn or_by_stdout(asked: Option<EventFormat>) -> EventFormat {
        asked.unwrap_or(if std::io::stdout().is_terminal() {
            EventFormat::Text
        } else {
            EventFormat::Json
        })
    }
}

/// One decision as a line for people: `HH:MM:SS  SESSION  DECISION  reason; reason`, the time
/// in the local zone (`TZ`), control characters escaped.
pub fn event_line(event: &TickEvent) -> String {
    let time = crate::time::parse_time(&event.time)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|| event.time.clone());
    let reasons = if event.reasons.is_empty() {
        "-".to_string()
    } else {
        event.reasons.join("; ")
    };
    format!(
        "{time}  {}  {:<8}  {}",
        crate::output::printable(&event.session),
        event.decision.as_str(),
        crate::output::one_line(&reasons)
    )
}

/// Rows of tab-separated cells, aligned in columns two spaces apart (the last column is not
/// padded), for a terminal.
pub fn aligned(rows: &[String]) -> Vec<String> {
    let cells: Vec<Vec<&str>> = rows.iter().map(|r| r.split('\t').collect()).collect();
    let columns = cells.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            cells
                .iter()
                .filter_map(|row| row.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    cells
        .iter()
        .map(|row| {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    let pad = widths[c] - cell.chars().count() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_line_up_and_the_last_is_not_padded() {
        let rows = vec![
            "SESSION\tSTATE\tTASK".to_string(),
            "a\tfinished:complete\t/t/x".to_string(),
            "long-name\trunning\t/t/yy".to_string(),
        ];
        let lines = aligned(&rows);
        assert_eq!(lines[0], "SESSION    STATE              TASK");
        assert_eq!(lines[1], "a          finished:complete  /t/x");
        assert_eq!(lines[2], "long-name  running            /t/yy");
        let at = |l: &str| l.find('/').unwrap();
        assert_eq!(at(&lines[1]), at(&lines[2]));
    }

    #[test]
    fn wide_characters_count_as_one_cell_each() {
        let rows = vec!["é\tx".to_string(), "ab\ty".to_string()];
        assert_eq!(aligned(&rows), ["é   x", "ab  y"]);
    }
}
