//! The change feed's view of the inbox: a question asked, a question answered or closed, a
//! message sent. Read through the documents they are kept in (`baton_core::inbox`), the same
//! on a folder and in a database, and compared with what was seen before.

use std::collections::BTreeMap;
use std::sync::Arc;

use baton_core::DocumentStore;
use baton_core::inbox::{self, Question};

use super::ChangeEvent;

/// What the feed last saw of the inbox.
pub(super) struct InboxState {
    documents: Arc<dyn DocumentStore>,
    questions: BTreeMap<String, Question>,
    /// The messages seen, by id.
    messages: std::collections::BTreeSet<String>,
}

impl InboxState {
    /// The first look, which sets the baseline silently.
    pub(super) fn read(documents: Arc<dyn DocumentStore>) -> baton_core::Result<InboxState> {
        let mut state = InboxState {
            documents,
            questions: BTreeMap::new(),
            messages: Default::default(),
        };
        state.update(&mut Vec::new())?;
        Ok(state)
    }

    /// Adds the events for questions asked or settled and messages sent since the last look.
    pub(super) fn update(&mut self, events: &mut Vec<ChangeEvent>) -> baton_core::Result<()> {
        // A document that cannot be read is skipped here (the views name it).
        let questions = inbox::questions(&*self.documents, false)?.items;
        let messages = inbox::all_messages(&*self.documents)?.items;
        for question in questions {
            match self.questions.get(&question.id) {
                None if question.is_open() => events.push(ChangeEvent::QuestionAsked {
                    question: question.clone(),
                }),
                Some(seen) if seen.state == question.state => {}
                _ => events.push(ChangeEvent::QuestionSettled {
                    question: question.clone(),
                }),
            }
            self.questions.insert(question.id.clone(), question);
        }
        for message in messages {
            if self.messages.insert(message.id.clone()) {
                events.push(ChangeEvent::MessageSent { message });
            }
        }
        Ok(())
    }
}
