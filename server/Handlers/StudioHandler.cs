using System.Collections.Frozen;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The studio: the files of <c>server/Studio</c> (pages, their scripts, one style sheet), embedded
/// in the assembly and read once, at the first studio request (not at startup: reading and freezing
/// them cost the server's start 5-19 ms). <c>/studio/{name}</c> serves <c>{name}.html</c>;
/// <c>/studio/{name}.js</c> and <c>.css</c> serve those files. Each page takes its database from its
/// own query string and reports a missing or unknown one itself, so a person who mistypes the
/// address reads why. The pages are built on the public HTTP API only.
/// </summary>
public sealed class StudioHandler : HandlerBase
{
    private const string ResourcePrefix = "Jackdaw.Server.Studio.";

    // The pages load nothing from outside and run no inline script; the policy makes a browser
    // hold them to that. Inline style attributes are allowed (column widths, bar lengths).
    private const string ContentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private readonly Lazy<(FrozenDictionary<string, StudioFile> Files, StudioFile Start)> _studio = new(ReadStudio);

    public StudioHandler(ServerContext server)
        : base(server)
    {
    }

    private static (FrozenDictionary<string, StudioFile> Files, StudioFile Start) ReadStudio()
    {
        var files = ReadFiles();
        return files.TryGetValue("index", out var start)
            ? (files, start)
            : throw new InvalidOperationException("The studio's start page (server/Studio/index.html) is not embedded in the server assembly.");
    }

    /// <summary><c>GET /</c>: a browser that opens the server's address lands in the studio.</summary>
    [Route("/", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask Root(RequestContext context)
    {
        context.Response.StatusCode = StatusCodes.Status302Found;
        context.Response.Headers.Location = "/studio/";
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// <c>GET /favicon.ico</c>: a browser asks for it on its own with every page; the studio has no
    /// icon, and a 204 says so without a 404 in the browser's console.
    /// </summary>
    [Route("/favicon.ico", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask Favicon(RequestContext context)
    {
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        context.Response.Headers.CacheControl = "public, max-age=86400";
        return ValueTask.CompletedTask;
    }

    /// <summary><c>GET /studio/</c> (or <c>/studio</c>): the start page, the databases.</summary>
    [Route("/studio", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask Start(RequestContext context) => Write(context, _studio.Value.Start);

    /// <summary>
    /// <c>GET /studio/{name}</c>: the page <c>{name}.html</c>, or the script or style sheet
    /// <c>{name}</c>; 404 <c>RouteNotFound</c> for a name the studio does not have.
    /// </summary>
    [Route("/studio/$", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask File(RequestContext context)
    {
        var name = context.GetCapture(0);
        if (name.IsEmpty)
        {
            return Write(context, _studio.Value.Start);
        }
        // The studio's file names are lowercase ASCII: anything else is simply not one of them.
        var lookup = _studio.Value.Files.GetAlternateLookup<ReadOnlySpan<char>>();
        if (lookup.TryGetValue(name, out var file))
        {
            return Write(context, file);
        }
        return JsonErrors.WriteAsync(context.HttpContext, StatusCodes.Status404NotFound, ErrorTypes.RouteNotFound,
            $"The studio has no page or file '{name}'. Its pages are listed at /studio/.");
    }

    private static ValueTask Write(RequestContext context, StudioFile file)
    {
        var headers = context.Response.Headers;
        headers.CacheControl = "no-cache";
        headers.ContentSecurityPolicy = ContentSecurityPolicy;
        headers.XContentTypeOptions = "nosniff";
        headers.XFrameOptions = "DENY";
        headers["Referrer-Policy"] = "same-origin";
        return context.WriteBytesAsync(file.Content, file.ContentType);
    }

    private static FrozenDictionary<string, StudioFile> ReadFiles()
    {
        var assembly = typeof(StudioHandler).Assembly;
        var files = new Dictionary<string, StudioFile>(StringComparer.Ordinal);
        foreach (var resource in assembly.GetManifestResourceNames())
        {
            if (!resource.StartsWith(ResourcePrefix, StringComparison.Ordinal))
            {
                continue;
            }
            var fileName = resource[ResourcePrefix.Length..];
            var (key, contentType) = Path.GetExtension(fileName) switch
            {
                ".html" => (Path.GetFileNameWithoutExtension(fileName), "text/html; charset=utf-8"),
                ".js" => (fileName, "text/javascript; charset=utf-8"),
                ".css" => (fileName, "text/css; charset=utf-8"),
                ".svg" => (fileName, "image/svg+xml"),
                _ => (null, null),
            };
            if (key is null)
            {
                continue;
            }
            using var stream = assembly.GetManifestResourceStream(resource)!;
            using var buffer = new MemoryStream();
            stream.CopyTo(buffer);
            files.Add(key, new StudioFile(buffer.ToArray(), contentType!));
        }
        return files.ToFrozenDictionary(StringComparer.Ordinal);
    }

    private sealed record StudioFile(byte[] Content, string ContentType);
}
