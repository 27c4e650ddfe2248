//! A program's own yes/no question on a screen (`Proceed (Y/n)?`, `[y/N]`, `(yes/no)`): no tool
//! call to read, only words. It is answered only when nothing near it speaks of loss, money
//! or risk, and the command that asked (when it is on the screen) is in no destructive set.
//! Words of loss: remove, uninstall, delete, purge, drop, destroy, overwrite, prune, publish,
//! transfer, format, "Would remove", and their kin (erase, wipe, truncate, discard, reset,
//! revoke, force, deploy, release, replace, lose, kill, terminate, irreversible, permanent,
//! cannot be undone); words of money: pay, charge, purchase, buy, billing, invoice, refund,
//! withdraw, a currency amount (`$5,000`, `€20`, `100 USD`); words of risk: sure, warning,
//! danger, caution, unsafe, risk. The default answer (`Y/n` or `y/N`) does not matter: a
//! default-Yes question after "Would remove:" is as much a person's call as a default-No one.

use std::sync::OnceLock;

use regex::Regex;

use super::{Decision, Verdict, destructive};

fn loss() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r"(?i)\b(?:",
            r"remov\w*|uninstall\w*|delet\w*|purg\w*|drop\w*|destr\w*|overwrit\w*|prun\w*|",
            r"publish\w*|unpublish\w*|transfer\w*|format\w*|eras\w*|wip(?:e|es|ed|ing)|",
            r"truncat\w*|discard\w*|reset\w*|revok\w*|forc(?:e|es|ed|ing)|deploy\w*|releas\w*|",
            r"replac\w*|lose|loses|losing|lost|kill\w*|terminat\w*|irreversibl\w*|",
            r"permanent\w*|undone|rollback|roll back|downgrad\w*|revert\w*|clean\w*|",
            r"pay|pays|paid|paying|payment\w*|charg\w*|purchas\w*|buy\w*|billing|invoice\w*|",
            r"refund\w*|withdraw\w*|money|credits?|subscri\w*|",
            r"sure|warning|danger\w*|caution|unsafe|risk\w*|sudo|password",
            r")\b|[$€£¥₿]\s?\d|\b\d[\d,.]*\s?(?:usd|eur|gbp|jpy|btc|eth|dollars?|euros?)\b",
        ))
        .expect("valid")
    })
}

/// The first word of loss, money or risk in `text`.
pub fn word_of_loss(text: &str) -> Option<String> {
    loss().find(text).map(|m| m.as_str().to_string())
}

/// Judge a yes/no question: `lines` are the question and the lines above it that belong to
/// it; `command` the command that asked, when the screen shows it.
pub fn judge_question(lines: &[&str], command: Option<&str>) -> Decision {
    for line in lines {
        if let Some(word) = word_of_loss(line) {
            return Decision {
                decision: Verdict::NoDecision,
                rule: "words-of-loss".to_string(),
                reason: format!("{word:?} near the question: a person decides"),
                message: None,
            };
        }
    }
    if let Some(danger) = command.and_then(|c| destructive::dangers(c).into_iter().next()) {
        return Decision {
            decision: Verdict::NoDecision,
            rule: format!("destructive:{}", danger.id),
            reason: format!(
                "the command that asks, {}: {}",
                danger.command, danger.explanation
            ),
            message: None,
        };
    }
    Decision {
        decision: Verdict::Allow,
        rule: "question-without-loss".to_string(),
        reason: "no word of loss, money or risk near the question".to_string(),
        message: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_about_loss_or_money_are_a_persons_call() {
        for lines in [
            vec!["Publish version 2.0.0 to npm? [y/N]"],
            vec!["Transfer $5,000 to account 1234? [y/N]"],
            vec!["Format /dev/sdb? (y/n)"],
            vec![
                "Found existing installation: numpy 1.26",
                "Uninstalling numpy-1.26:",
                "  Would remove:",
                "    /usr/lib/python3/numpy/*",
                "Proceed (Y/n)?",
            ],
            vec!["Are you sure? [y/N]"],
            vec!["Send 100 USD? [Y/n]"],
            vec!["This will prune 3 images. Continue? [Y/n]"],
        ] {
            let d = judge_question(&lines, None);
            assert_eq!(d.decision, Verdict::NoDecision, "{lines:?}");
        }
        let d = judge_question(&["Continue? [y/N]"], Some("npm publish"));
        assert_eq!(d.decision, Verdict::NoDecision);
        for lines in [
            vec!["Collecting 2 packages", "Continue? [y/N]"],
            vec!["Install 3 packages? [Y/n]"],
            vec!["Proceed with the upgrade of 4 packages? (yes/no)"],
        ] {
            let d = judge_question(&lines, None);
            assert_eq!(d.decision, Verdict::Allow, "{lines:?}: {}", d.reason);
        }
    }
}
