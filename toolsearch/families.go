package toolsearch

import "strings"

// families are words that tool vocabularies use for the same action or
// thing: an agent asks to "remove" what a server calls "delete", to
// "open a ticket" where the tool creates an issue. Each line is one
// family. A query word finds the tools that use another word of its
// family, at expandWeight of its own weight, so the tool that uses the
// agent's own word still ranks first.
//
// The lists are the common verbs and nouns of MCP tool names and
// descriptions in general, not words picked to fix particular requests of
// the evaluation set: add a family when it holds for tool catalogs at
// large, and measure it with TestRecall.
const familyText = `
get fetch retrieve read show view obtain load display
list enumerate browse
create add new make insert generate
delete remove destroy drop erase purge
update edit modify change patch alter
set configure config setting
search find query lookup locate discover grep
run execute invoke exec launch trigger perform
start begin
stop terminate kill halt cancel abort end
close exit quit
file document
directory folder dir
repo repository project
issue ticket bug
pr pull
merge combine
commit push
branch fork
screenshot capture screen
image picture photo png jpg jpeg
navigate open visit goto go
click press tap
type enter input fill
message post send chat
comment reply
user member person people account profile
page tab webpage
web internet online website site
scrape crawl extract
process task job
command shell terminal cli bash console
database db table sql rows
memory remember store knowledge
move rename relocate
copy duplicate clone
upload attach
download save
wait sleep pause
location place address
distance route directions travel
error exception failure
documentation docs manual reference
javascript js script
container pod
deployment deploy release rollout
secret credential token
email mail
calendar event meeting schedule
reaction emoji react
content text body contents
info metadata detail details properties
history recent previous
describe explain
check status verify
log logs
`

// expandWeight is how much a family member of a query word counts, next
// to the word itself. Matching longer words by prefix (config:
// configuration) was tried as well and gained nothing on the evaluation
// set (BENCHMARKS.md).
const expandWeight = 0.5

// family maps the stem of every word of a family to the stems of the
// others.
var family = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(familyText, "\n") {
		var stems []string
		for _, w := range strings.Fields(line) {
			if st := Tokens(w); len(st) == 1 {
				stems = append(stems, st[0])
			}
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !contains(m[s], o) {
					m[s] = append(m[s], o)
				}
			}
		}
	}
	return m
}()

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
