using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Identities, RavenDB's other id scheme: a put of <c>users|</c> stores <c>users/1</c>, then
/// <c>users/2</c>..., one counter per prefix kept in the database's <c>Identities</c> tree (durable
/// with the transaction that takes a value). These routes read and move the counters directly.
/// </summary>
public sealed class IdentityHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary><c>POST /databases/*/identity/next?name=users</c> → <c>{"NewIdentityValue":3}</c>: the next value, as a put of <c>users|</c> would take it.</summary>
    [Route("/databases/*/identity/next", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Next(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var command = new NextIdentityCommand(Prefix(query));
        await database.EnqueueAsync(command).ConfigureAwait(false);
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("NewIdentityValue", command.Value);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /databases/*/identity/seed?name=users&amp;value=1990[&amp;force=true]</c> → <c>{"NewSeedValue":1990}</c>:
    /// raises the counter to the value (a lower one leaves it, and the answer says where it is), or sets it when forced.
    /// </summary>
    [Route("/databases/*/identity/seed", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Seed(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var prefix = Prefix(query);
        if (query.GetString("value") is not { Length: > 0 })
        {
            throw new BadRequestException("Query parameter 'value' is required: the value to seed the identity with (?name=users&value=1000).");
        }
        var value = query.GetInt64("value", 0);
        var force = query.GetString("force") is { } forced && (forced.Equals("true", StringComparison.OrdinalIgnoreCase)
            || (!forced.Equals("false", StringComparison.OrdinalIgnoreCase) ? throw new BadRequestException($"Query parameter 'force' is '{forced}'; it is true or false.") : false));
        var command = new SeedIdentityCommand(prefix, value, force);
        await database.EnqueueAsync(command).ConfigureAwait(false);
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("NewSeedValue", command.Value);
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary><c>GET /databases/*/debug/identities[?start=&amp;pageSize=]</c> → <c>{"users|":2,"invoices|":7}</c>, lowercased, in name order.</summary>
    [Route("/databases/*/debug/identities", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask List(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var query = new UrlQuery(context.Request.QueryString.Value);
        var start = query.GetInt32("start", 0);
        var pageSize = query.GetInt32("pageSize", int.MaxValue, min: 1);
        using var reader = database.BeginRead();
        var json = context.StartJson();
        json.WriteStartObject();
        foreach (var (prefix, value) in reader.GetIdentities(start, pageSize))
        {
            json.WriteNumber(prefix + "|", value);
        }
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>The identity's prefix: <c>name</c> without the <c>|</c> RavenDB's clients may leave on it.</summary>
    private static string Prefix(UrlQuery query)
    {
        var name = query.GetString("name");
        if (string.IsNullOrWhiteSpace(name))
        {
            throw new BadRequestException("Query parameter 'name' is required: the identity's prefix, such as 'users' for ids users/1, users/2, ...");
        }
        return name.EndsWith('|') ? name[..^1] : name;
    }
}
