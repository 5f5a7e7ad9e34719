// Package bucket hosts PDFs in an S3-compatible bucket for output=url.
//
// Each PDF is one object, <prefix><id>.pdf, uploaded in parts when large,
// with Content-Type application/pdf, an inline Content-Disposition carrying the
// download name, Cache-Control private and Expires at the file's expiry
// (S3 sends them with a presigned download), and user metadata (x-amz-meta-*) holding the name, the
// creation and expiry times, the SHA-256 of the bytes and owner-digest,
// the hex SHA-256 of "mdpress-owner", NUL, the id, NUL, the owner's user
// id. A presigned GET returns the metadata to the URL's holder, who so
// learns neither the account nor which other files it made; an operator
// checks an object against a known account by computing the digest.
// Objects stored before owner-digest carry the owner in clear (owner);
// they are served, swept and deleted as the others, and are not rewritten.
//
// # Configuration
//
// The keys of plugins.sink-s3 in the host's config:
//
//	bucket         the bucket's name (required)
//	region         default us-east-1
//	endpoint       empty for AWS; the URL of any other S3 (MinIO, versitygw, R2)
//	usePathStyle   true: http://host/bucket/key rather than http://bucket.host/key
//	               (MinIO and versitygw behind a host name need it)
//	createBucket   true: create the bucket at start when it is missing
//	               (false: a missing bucket stops mdpress serve, saying so)
//	prefix         key prefix of the objects, such as "hosted/"
//	delivery       presign (default) or proxy, see Delivery
//	partSizeMB     multipart part size, 5 to 5120 (default 8)
//	sweepInterval  how often expired objects are deleted (default 1h; 0: off)
//	accessKeyID, secretAccessKey
//	               keys, when not in the environment (see Credentials)
//
// # Delivery
//
// With delivery "presign" Store returns a presigned GET URL, valid for what
// is left of the file's retention once it is uploaded, but never longer
// than 7 days (604800 s, the most SigV4 allows). A file kept longer gets no
// presigned URL: the host serves it at /v1/files/{id} through Open, so the
// link lives as long as the file. A presigned URL also dies with the
// credentials that signed it: with temporary credentials (an instance or pod
// role, STS) links end with the session, so use long-lived keys or delivery
// "proxy". With "proxy" every download streams through the host (Open
// issues a ranged GetObject).
//
// # Expiry
//
// Open refuses a file past its expiry (410) whatever is left in the bucket.
// Expired objects are deleted by the sweeper, every sweepInterval (1h when
// the config does not set it): it lists the prefix and deletes expired
// objects, reading each object's expiry once, and aborts multipart uploads a
// crash left unfinished; several replicas sweeping at once is harmless. Or
// set sweepInterval to 0 and give the bucket a lifecycle rule that expires
// objects under the prefix a day after the longest retention (lifecycle
// counts days from upload, so it must not be shorter than any file's TTL),
// for example for 30 days:
//
//	{"Rules": [{"ID": "mdpress-hosted", "Status": "Enabled",
//	  "Filter": {"Prefix": "hosted/"}, "Expiration": {"Days": 31},
//	  "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}}]}
//
//	aws s3api put-bucket-lifecycle-configuration --bucket B --lifecycle-configuration file://rule.json
//
// The abort rule does for unfinished uploads what the sweeper does.
//
// On a bucket with versioning on, a delete only hides an object: its
// bytes stay as a noncurrent version, past every file's expiry, until a
// lifecycle rule removes them; add one ("NoncurrentVersionExpiration":
// {"NoncurrentDays": 1} in the rule above) or keep versioning off for the
// prefix's bucket.
//
// # Credentials
//
// The standard AWS environment variables (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) win over accessKeyID and
// secretAccessKey in the config; with neither, the SDK's default chain
// (shared files, web identity, instance roles) applies.
package bucket
