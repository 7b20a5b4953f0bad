export default function Checkout() {
  return <main>Checkout</main>;
}
