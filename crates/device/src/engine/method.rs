//! The engine's methods of the link, named once. [`engine_methods!`] holds the one list; it makes
//! [`EngineMethod`], which [`super::methods::request`] matches with no catch-all (a method listed
//! without a handler does not compile), and the pattern the dispatcher routes to the engine with
//! (its match over every [`LinkMethod`] has no catch-all either: a method of the link that is
//! neither listed here nor served by the dispatcher does not compile).

use lembas_protocol::LinkMethod;

/// The engine's methods, as [`LinkMethod`] names them. `engine_methods!(pattern)` is the pattern
/// `LinkMethod::SessionNew | …` (for a `match`); `engine_methods!(declare)` declares
/// [`EngineMethod`], once, below.
macro_rules! engine_methods {
    ($mode:ident) => {
        $crate::engine::method::expand! { $mode:
            SessionNew SessionPrompt SessionSetMode SessionCancel SessionLoad SessionList SessionResume
            SessionClose SessionSetConfigOption AcpSessionDelete Configure Steer SessionHistory SessionStatus SessionDelete
            SessionRewind SessionCompact SessionTitle FilesSearch Commands Jobs JobOutput JobStop JobSend
            JobTranscript
        }
    };
}

/// What [`engine_methods!`] makes of its list.
macro_rules! expand {
    (pattern: $($method:ident)*) => {
        $(::lembas_protocol::LinkMethod::$method)|*
    };
    (declare: $($method:ident)*) => {
        /// A method of the link the engine serves, named as its [`LinkMethod`] variant.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum EngineMethod {
            $($method,)*
        }

        impl EngineMethod {
            /// The engine's method `method` is, if it is one.
            pub fn of(method: LinkMethod) -> Option<EngineMethod> {
                match method {
                    $(LinkMethod::$method => Some(EngineMethod::$method),)*
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use {engine_methods, expand};

engine_methods!(declare);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_and_the_enum_are_the_same_list() {
        let mut listed = 0;
        for method in LinkMethod::ALL.iter().copied() {
            let in_pattern = matches!(method, engine_methods!(pattern));
            let engine = EngineMethod::of(method);
            assert_eq!(in_pattern, engine.is_some(), "{method}");
            if let Some(engine) = engine {
                assert_eq!(format!("{engine:?}"), format!("{method:?}"));
                listed += 1;
            }
        }
        assert!(listed > 0, "the list is read");
    }
}
