use baton_test_support::pg::{PgServer, insert_tasks};
fn main() {
    let server = PgServer::start();
    println!("URL {}", server.url());
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    insert_tasks(server.url(), "p1", 5000);
    println!("INSERTED");
    std::io::stdin().read_line(&mut line).unwrap();
}
