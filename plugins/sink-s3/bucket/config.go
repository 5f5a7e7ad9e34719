package bucket

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Delivery modes.
const (
	DeliveryPresign = "presign"
	DeliveryProxy   = "proxy"
)

// Config is the plugin's config block after defaults.
type Config struct {
	Endpoint        string // empty: AWS
	Region          string
	Bucket          string
	Prefix          string // empty, or ending in "/"
	UsePathStyle    bool
	AccessKeyID     string
	SecretAccessKey string
	CreateBucket    bool
	Delivery        string
	PartSize        int64         // bytes
	SweepInterval   time.Duration // 0: no sweeper (a bucket lifecycle rule expires objects)
}

type rawConfig struct {
	Endpoint        string          `json:"endpoint"`
	Region          string          `json:"region"`
	Bucket          string          `json:"bucket"`
	Prefix          string          `json:"prefix"`
	UsePathStyle    bool            `json:"usePathStyle"`
	AccessKeyID     string          `json:"accessKeyID"`
	SecretAccessKey string          `json:"secretAccessKey"`
	CreateBucket    bool            `json:"createBucket"`
	Delivery        string          `json:"delivery"`
	PartSizeMB      *int64          `json:"partSizeMB"`
	SweepInterval   json.RawMessage `json:"sweepInterval"`
}

// Part sizes S3 accepts for multipart uploads.
const (
	minPartMB     = 5
	maxPartMB     = 5 << 10
	defaultPartMB = 8
)

// defaultSweep is how often expired objects are deleted when the config
// does not say.
const defaultSweep = time.Hour

// bucketName is the S3 rule for bucket names, minus the corner cases
// (IP-address shapes) that no operator types by accident.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

func parseConfig(raw []byte) (Config, error) {
	var rc rawConfig
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rc); err != nil {
			return Config{}, configError(err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return Config{}, invalid("trailing data after the object")
		}
	}
	c := Config{
		Endpoint:        rc.Endpoint,
		Region:          rc.Region,
		Bucket:          rc.Bucket,
		Prefix:          strings.TrimLeft(rc.Prefix, "/"),
		UsePathStyle:    rc.UsePathStyle,
		AccessKeyID:     rc.AccessKeyID,
		SecretAccessKey: rc.SecretAccessKey,
		CreateBucket:    rc.CreateBucket,
		Delivery:        rc.Delivery,
		PartSize:        defaultPartMB << 20,
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.Delivery == "" {
		c.Delivery = DeliveryPresign
	}
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, invalid("endpoint: want an http:// or https:// URL")
		}
	}
	if !bucketName.MatchString(c.Bucket) || strings.Contains(c.Bucket, "..") {
		return c, invalid("bucket: want an S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)")
	}
	if strings.Contains("/"+c.Prefix, "/../") || strings.Contains("/"+c.Prefix, "/./") {
		return c, invalid("prefix: must not hold . or .. segments")
	}
	if (c.AccessKeyID == "") != (c.SecretAccessKey == "") {
		return c, invalid("accessKeyID and secretAccessKey: set both or neither")
	}
	if c.Delivery != DeliveryPresign && c.Delivery != DeliveryProxy {
		return c, invalid(fmt.Sprintf("delivery: want %q or %q", DeliveryPresign, DeliveryProxy))
	}
	if rc.PartSizeMB != nil {
		mb := *rc.PartSizeMB
		if mb < minPartMB || mb > maxPartMB {
			return c, invalid(fmt.Sprintf("partSizeMB: want %d to %d", minPartMB, maxPartMB))
		}
		c.PartSize = mb << 20
	}
	// Swept by default: left unset, expired objects and the parts of
	// uploads a crash cut short would stay in the bucket for good unless
	// the operator knew to add a lifecycle rule.
	c.SweepInterval = defaultSweep
	if len(rc.SweepInterval) > 0 && string(rc.SweepInterval) != "null" {
		d, err := sdkplugin.ParseDuration(rc.SweepInterval)
		if err != nil || d < 0 {
			return c, invalid(`sweepInterval: want a duration such as "1h" or a number of seconds; 0 turns the sweeper off`)
		}
		c.SweepInterval = d
	}
	return c, nil
}

func invalid(msg string) error {
	return stage.Errorf(stage.CodeInvalid, "sink-s3 config: %s", msg)
}

func configError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return stage.Wrap(stage.CodeInvalid, err, fmt.Sprintf("sink-s3 config: %s: want %s", typeErr.Field, typeErr.Type))
	}
	// An unknown key is named in the decoder's own text.
	return stage.Wrap(stage.CodeInvalid, err, "sink-s3 config: "+err.Error())
}
