package plugin

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// services names each stage's gRPC service.
var services = map[string]string{
	stage.NameAuth: pb.Auth_ServiceDesc.ServiceName, stage.NameMeter: pb.Meter_ServiceDesc.ServiceName,
	stage.NameParse: pb.Parse_ServiceDesc.ServiceName, stage.NameStyle: pb.Style_ServiceDesc.ServiceName,
	stage.NameRender: pb.Render_ServiceDesc.ServiceName, stage.NameSink: pb.Sink_ServiceDesc.ServiceName,
}

// CheckStage returns an error when the plugin does not serve the service of
// the stage it was launched for. Configure and Health belong to the base
// service that every plugin serves, so a binary built for another stage
// (render.plugin: sink-disk) passed them, and /readyz with them, and then
// failed every request with "unknown service". The services are read from
// gRPC reflection, which go-plugin's server registers; a plugin that does
// not serve reflection (one in another language) is taken at its word.
func (c *Client) CheckStage(ctx context.Context) error {
	want, ok := services[c.stage]
	if !ok {
		return fmt.Errorf("unknown stage %q", c.stage)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := reflectpb.NewServerReflectionClient(c.conn).ServerReflectionInfo(ctx)
	if err != nil {
		return reflectionErr(err)
	}
	req := &reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}
	if err := stream.Send(req); err != nil {
		return reflectionErr(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		return reflectionErr(err)
	}
	var served []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		if s.GetName() == want {
			return nil
		}
		for name, svc := range services {
			if s.GetName() == svc {
				served = append(served, name)
			}
		}
	}
	if len(served) == 0 {
		return fmt.Errorf("it serves no %s stage (%s), nor any other", c.stage, want)
	}
	return fmt.Errorf("it serves the %s stage, not %s: a plugin for another stage", strings.Join(served, ", "), c.stage)
}

func reflectionErr(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return nil
	}
	return fmt.Errorf("list its services: %w", err)
}
