fn main() {
    // The web UI is embedded when the app is compiled (`generate_context!`); a rebuilt
    // `ui/dist` must rebuild the app, or a test would drive yesterday's UI.
    println!("cargo:rerun-if-changed=../ui/dist");
    println!("cargo:rerun-if-changed=tauri.conf.json");
    tauri_build::build()
}
