using System.Text.Json;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>/build/version</c>: the body never changes, so it is serialized once.</summary>
public sealed class BuildHandler : HandlerBase
{
    private readonly byte[] _versionBody;

    public BuildHandler(ServerContext server)
        : base(server)
    {
        var build = server.Build;
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer, JsonDefaults.WriterOptions))
        {
            writer.WriteStartObject();
            writer.WriteString("Version", build.Version);
            // RavenDB's BuildNumber, which its clients' GetBuildNumberOperation reads: the product's
            // major.minor and a build number made of the version's parts (0.1.0 → 100).
            var parts = build.Version.Split('.', '-', '+').Select(p => int.TryParse(p, System.Globalization.CultureInfo.InvariantCulture, out var n) ? n : 0).Concat([0, 0, 0]).ToArray();
            writer.WriteString("ProductVersion", $"{parts[0]}.{parts[1]}");
            writer.WriteNumber("BuildVersion", (parts[0] * 10_000) + (parts[1] * 100) + parts[2]);
            writer.WriteString("FullVersion", build.FullVersion);
            writer.WriteString("CommitHash", build.CommitHash);
            writer.WriteEndObject();
        }
        _versionBody = buffer.WrittenSpan.ToArray();
    }

    [Route("/build/version", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask GetVersion(RequestContext context) => context.WriteBytesAsync(_versionBody, JsonErrors.JsonContentType);
}
