export default function EventDetail() {
  return <main>EventDetail</main>;
}
