fn main() {
    println!("reef");
}
