// Package disk hosts PDFs on the local file system for output=url.
//
// Layout under the configured directory, fanned out by id prefix so no
// directory grows past a few thousand entries:
//
//	ab/cd/abcd…ef.pdf    the PDF
//	ab/cd/abcd…ef.json   its metadata record (owner, size, filename,
//	                     created, expires, sha256)
//	ab/cd/.tmp-…         a write in progress
//
// Both files are written to a temp file in the same directory, fsynced,
// renamed into place, and the directory fsynced. The data file is renamed
// first and the metadata record last: the record is the commit point. Open
// reads the record before anything else, so a crash at any step leaves at
// worst a temp file or a data file without a record, which is never served
// and which the sweeper removes once it is an hour old (younger ones may be
// a Store still in progress).
//
// Every file access goes through an os.Root opened on the directory, and ids
// are checked for exact shape before that, so no id can name a path outside.
package disk
