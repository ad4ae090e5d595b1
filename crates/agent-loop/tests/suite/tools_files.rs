//! read_file, write_file, patch and search_files against temp folders.

use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok, error_of};

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn read_file_numbers_lines_and_pages() {
    let env = ToolEnv::new();
    env.write(&env.cwd_path("notes.txt"), &numbered(30));
    let all = env.call("read_file", json!({"path": "notes.txt"})).await;
    assert_ok(&all);
    assert_eq!(all["total_lines"], 30);
    assert_eq!(all["end_line"], 30);
    assert!(all.get("truncated").is_none());
    assert!(
        all["content"]
            .as_str()
            .unwrap()
            .starts_with("     1\tline 1\n")
    );

    let page = env
        .call(
            "read_file",
            json!({"path": "notes.txt", "offset": 10, "limit": 3}),
        )
        .await;
    assert_eq!(
        page["content"],
        "    10\tline 10\n    11\tline 11\n    12\tline 12\n"
    );
    assert_eq!(page["start_line"], 10);
    assert_eq!(page["end_line"], 12);
    assert_eq!(page["truncated"], true);
    assert!(
        page["hint"].as_str().unwrap().contains("offset 13"),
        "{page}"
    );

    let past = env
        .call("read_file", json!({"path": "notes.txt", "offset": 99}))
        .await;
    assert!(error_of(&past).contains("past the end"), "{past}");

    let absolute = env
        .call(
            "read_file",
            json!({"path": env.cwd_path("notes.txt").to_str().unwrap(), "limit": 1}),
        )
        .await;
    assert_eq!(absolute["content"], "     1\tline 1\n");
}

#[tokio::test]
async fn read_file_refuses_binaries_directories_and_missing_files() {
    let env = ToolEnv::new();
    std::fs::write(env.cwd_path("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    let bin = env.call("read_file", json!({"path": "blob.bin"})).await;
    assert!(error_of(&bin).contains("binary"), "{bin}");
    let dir = env.call("read_file", json!({"path": "."})).await;
    assert!(error_of(&dir).contains("directory"), "{dir}");
    let missing = env.call("read_file", json!({"path": "nope.txt"})).await;
    assert!(error_of(&missing).contains("nope.txt"), "{missing}");
}

#[tokio::test]
async fn write_file_creates_parents_and_replaces_atomically() {
    let env = ToolEnv::new();
    let out = env
        .call(
            "write_file",
            json!({"path": "deep/er/file.md", "content": "one\n"}),
        )
        .await;
    assert_ok(&out);
    assert_eq!(out["created"], true);
    assert_eq!(out["bytes_written"], 4);
    let target = env.cwd_path("deep/er/file.md");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\n");

    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let again = env
        .call(
            "write_file",
            json!({"path": "deep/er/file.md", "content": "two\n"}),
        )
        .await;
    assert_eq!(again["created"], false);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "two\n");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "mode kept across the rename");
    }
    // The write went through a temporary file that is gone now.
    let leftovers: Vec<_> = std::fs::read_dir(env.cwd_path("deep/er"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("file.md")]);
}

#[tokio::test]
async fn file_tools_refuse_the_skills_folder() {
    let env = ToolEnv::new();
    let skill_md = env.home_path("skills/demo/SKILL.md");
    env.write(&skill_md, "---\nname: demo\ndescription: d\n---\nbody\n");
    // Reached through `..` so a purely textual check would miss it (both temp
    // dirs live in the same parent).
    let sneaky = format!(
        "{}/../{}/skills/demo/new.md",
        env.cwd.path().display(),
        env.home.path().file_name().unwrap().to_string_lossy()
    );
    for path in [
        env.home_path("skills/demo/notes.md").display().to_string(),
        env.home_path("skills/new-skill/SKILL.md")
            .display()
            .to_string(),
        sneaky,
    ] {
        let out = env
            .call("write_file", json!({"path": path, "content": "x"}))
            .await;
        assert!(error_of(&out).contains("skills folder"), "{path}: {out}");
        assert!(out["hint"].as_str().unwrap().contains("skill_manage"));
    }
    let patched = env
        .call(
            "patch",
            json!({"path": skill_md.display().to_string(), "old_string": "body", "new_string": "new"}),
        )
        .await;
    assert!(error_of(&patched).contains("skills folder"), "{patched}");
    assert!(
        std::fs::read_to_string(&skill_md)
            .unwrap()
            .ends_with("body\n")
    );
    // Reading is fine.
    let read = env
        .call("read_file", json!({"path": skill_md.display().to_string()}))
        .await;
    assert_ok(&read);
}

#[tokio::test]
async fn patch_uses_the_fuzzy_engine() {
    let env = ToolEnv::new();
    let file = env.cwd_path("src.py");
    env.write(&file, "def main():\n    print('hi')\n    return 0\n");
    // Indentation differs from the file: the fuzzy engine still finds it.
    let out = env
        .call(
            "patch",
            json!({"path": "src.py", "old_string": "print('hi')\n  return 0", "new_string": "print('bye')\n    return 1"}),
        )
        .await;
    assert_ok(&out);
    assert_eq!(out["replacements"], 1);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("print('bye')") && text.contains("return 1"),
        "{text}"
    );

    let missing = env
        .call(
            "patch",
            json!({"path": "src.py", "old_string": "nothing like it", "new_string": "x"}),
        )
        .await;
    assert!(error_of(&missing).contains("not found"), "{missing}");

    env.write(&file, "a = 1\na = 1\n");
    let ambiguous = env
        .call(
            "patch",
            json!({"path": "src.py", "old_string": "a = 1", "new_string": "a = 2"}),
        )
        .await;
    assert!(error_of(&ambiguous).contains("2 places"), "{ambiguous}");
    let all = env
        .call(
            "patch",
            json!({"path": "src.py", "old_string": "a = 1", "new_string": "a = 2", "replace_all": true}),
        )
        .await;
    assert_eq!(all["replacements"], 2);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a = 2\na = 2\n");
}

#[tokio::test]
async fn search_files_finds_lines_and_honours_gitignore() {
    let env = ToolEnv::new();
    env.write(&env.cwd_path(".gitignore"), "target/\n");
    env.write(&env.cwd_path("src/lib.rs"), "fn alpha() {}\nfn beta() {}\n");
    env.write(&env.cwd_path("src/main.rs"), "fn main() { alpha(); }\n");
    env.write(
        &env.cwd_path("docs/guide.md"),
        "Alpha is the first letter.\n",
    );
    env.write(&env.cwd_path("target/gen.rs"), "fn alpha_generated() {}\n");
    std::fs::write(env.cwd_path("src/blob.bin"), b"alpha\0binary").unwrap();

    let out = env.call("search_files", json!({"pattern": "alpha"})).await;
    assert_ok(&out);
    assert_eq!(
        out["matches"],
        json!([
            "src/lib.rs:1: fn alpha() {}",
            "src/main.rs:1: fn main() { alpha(); }"
        ])
    );

    let insensitive = env
        .call(
            "search_files",
            json!({"pattern": "^alpha", "case_insensitive": true, "file_glob": "*.md"}),
        )
        .await;
    assert_eq!(
        insensitive["matches"],
        json!(["docs/guide.md:1: Alpha is the first letter."])
    );

    let files = env
        .call("search_files", json!({"pattern": "*.rs", "mode": "files"}))
        .await;
    assert_eq!(files["files"], json!(["src/lib.rs", "src/main.rs"]));

    let capped = env
        .call("search_files", json!({"pattern": "fn", "max_results": 2}))
        .await;
    assert_eq!(capped["count"], 2);
    assert_eq!(capped["truncated"], true);

    let bad = env.call("search_files", json!({"pattern": "fn("})).await;
    assert!(error_of(&bad).contains("regular expression"), "{bad}");
}
