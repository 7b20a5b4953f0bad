export default function EventList() {
  return <main>EventList</main>;
}
