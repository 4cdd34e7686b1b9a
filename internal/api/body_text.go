package api

import "zhizhi/internal/pages"

// multilineFields are the body fields that are prose a person may write
// over several lines (a card's summary, a reason), as the console's
// textareas are: tab, newline and carriage return pass there.
var multilineFields = map[string]bool{"summary": true, "reason": true}

// badBodyText returns the place (such as "urls[1]") of the first string in
// a JSON body, or key of one of its objects, that holds a control
// character, and whether there is one. Such text is never meant and is
// refused before anything reads it; a body that is not JSON is left to the
// decoder to refuse.
func badBodyText(body []byte) (string, bool) { return pages.BadJSONText(body, multilineFields) }

// printable is place as it can be shown in an answer: a key that itself
// holds a control character is not repeated.
func printable(place string) string { return pages.PrintablePlace(place) }
