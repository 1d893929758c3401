using System.Diagnostics;
using Jackdaw.Server.Handlers;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Microsoft.AspNetCore.Http.Features;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>A test route that tells whether ASP.NET Core's hosting made a request activity for it.</summary>
public sealed class ActivityProbeHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/test/activity", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask Probe(RequestContext context)
    {
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteBoolean("Activity", Activity.Current is not null);
        json.WriteBoolean("ActivityFeature", context.HttpContext.Features.Get<IHttpActivityFeature>() is not null);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }
}
