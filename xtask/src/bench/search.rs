//! `bench search`: runs skill-core's `search_cost` example and records what `skills_search`
//! costs at 10,000 skills (a query ≤ 20 ms) and how often a skill's own body finds it.

use anyhow::Result;

use super::{BenchArgs, ExampleFigure, Target, Workspace, run_example_group};

pub fn run(ws: &Workspace, args: &BenchArgs) -> Result<bool> {
    let figures = [
        ExampleFigure::new(
            "search_query_10000",
            "one skills_search query over 10,000 skills (median of 500)",
            Target::AtMostMs(20.0),
        ),
        ExampleFigure::new(
            "search_build_10000",
            "building the search index of 10,000 skills, bodies in memory (median of 5)",
            Target::None,
        ),
        ExampleFigure::new(
            "search_top5_1000",
            "top-5 retrieval, a query from each skill's own body, 1,000 skills (target ≥ 90 %)",
            Target::None,
        ),
        ExampleFigure::new(
            "search_top1_1000",
            "top-1 retrieval, 1,000 skills",
            Target::None,
        ),
        ExampleFigure::new(
            "search_top5_10000",
            "top-5 retrieval, 10,000 skills",
            Target::None,
        ),
        ExampleFigure::new(
            "search_top1_10000",
            "top-1 retrieval, 10,000 skills",
            Target::None,
        ),
    ];
    run_example_group(
        ws,
        args,
        ("skill-core", "search_cost", "search"),
        &figures,
        |_, table| {
            format!(
                "## Skill search\n\n\
`skills_search` over skills made by test-support's deterministic generator \
(names, descriptions with a trigger, tags and bodies sharing words from a pool \
of 1,500): the cost of one query and of building the index, and how often a \
query made from a skill's own body finds it (release build).\n\n{table}"
            )
        },
    )
}
