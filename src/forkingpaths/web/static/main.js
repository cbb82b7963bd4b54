// The viewer's entry point.
import { start } from "./app.js";

start();
