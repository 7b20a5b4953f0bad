import { render } from "@testing-library/react";
import EventList from "./EventList";

test("renders", () => {
  render(<EventList />);
});
