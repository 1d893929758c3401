using System.Buffers;
using System.Globalization;
using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// RavenDB's client configuration (<c>{"Disabled","ReadBalanceBehavior","MaxNumberOfRequestsPerSession",
/// "LoadBalanceBehavior","IdentityPartsSeparator"}</c>): server-wide and per database, read by the
/// clients when an answer carries <c>Refresh-Client-Configuration: true</c> (the pipeline sets it
/// when the <c>Client-Configuration-Etag</c> a client sent is older). In a cluster the changes go to
/// the leader and into the state; a lone server keeps them locally (<see cref="Cluster.ClusterNode.PutClientConfigurationAsync"/>).
/// </summary>
public sealed class ClientConfigurationHandler(ServerContext server) : HandlerBase(server)
{
    private static readonly string[] ReadBalanceBehaviors = ["None", "RoundRobin", "FastestNode"];

    /// <summary>
    /// <c>GET /databases/*/configuration/client</c> (RavenDB's <c>GetClientConfigurationOperation</c>):
    /// <c>{"Etag","Configuration":{...}|null}</c>, the database's own configuration unless it has none
    /// or it is disabled, then the server-wide one unless that is disabled.
    /// </summary>
    [Route("/databases/*/configuration/client", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public ValueTask GetForDatabase(RequestContext context)
    {
        var name = RequireDatabase(context.GetCaptureMemory(0).ToString());
        var (json, etag) = Server.Cluster.ClientConfigurationOf(name);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("Etag", etag);
        writer.WritePropertyName("Configuration");
        WriteConfiguration(writer, json, etag);
        writer.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary><c>GET /configuration/client</c> (RavenDB's <c>GetServerWideClientConfigurationOperation</c>): the server-wide configuration, or <c>null</c>.</summary>
    [Route("/configuration/client", "GET")]
    [Access(RouteAccess.ValidUser)]
    public ValueTask GetServerWide(RequestContext context)
    {
        var configuration = Server.Cluster.ServerClientConfiguration;
        var writer = context.StartJson();
        WriteConfiguration(writer, configuration?.Json, configuration?.Etag ?? 0);
        return context.CompleteJsonAsync();
    }

    /// <summary>
    /// <c>PUT /databases/*/admin/configuration/client</c> (RavenDB's <c>PutClientConfigurationOperation</c>):
    /// the database's configuration → <c>{"RaftCommandIndex"}</c>. 400 for a field of the wrong type
    /// or an unknown <c>ReadBalanceBehavior</c>.
    /// </summary>
    [Route("/databases/*/admin/configuration/client", "PUT")]
    [Access(RouteAccess.DatabaseAdmin)]
    public async ValueTask PutForDatabase(RequestContext context)
    {
        var name = RequireDatabase(context.GetCaptureMemory(0).ToString());
        await PutAsync(context, name).ConfigureAwait(false);
    }

    /// <summary><c>PUT /admin/configuration/client</c> (RavenDB's <c>PutServerWideClientConfigurationOperation</c>): the server-wide configuration → <c>{"RaftCommandIndex"}</c>.</summary>
    [Route("/admin/configuration/client", "PUT")]
    [Access(RouteAccess.Operator)]
    public async ValueTask PutServerWide(RequestContext context) => await PutAsync(context, database: null).ConfigureAwait(false);

    private async ValueTask PutAsync(RequestContext context, string? database)
    {
        var read = await DocumentBodies.BufferAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false);
        byte[] body;
        try
        {
            body = read.Buffer.ToArray();
        }
        finally
        {
            context.Request.BodyReader.AdvanceTo(read.Buffer.End);
        }
        var json = Check(body);
        if (await LeaderForwarding.ForwardedAsync(context, body: body).ConfigureAwait(false))
        {
            return;
        }
        var cluster = Server.Cluster;
        var etag = await cluster.PutClientConfigurationAsync(database, json, LeaderForwarding.CommandId(context), context.RequestAborted).ConfigureAwait(false);
        if (cluster.IsClustered)
        {
            await cluster.WaitForLocalAsync(etag, context.RequestAborted).ConfigureAwait(false);
            context.Response.Headers[LeaderForwarding.AppliedEtagHeader] = etag.ToString(CultureInfo.InvariantCulture);
        }
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("RaftCommandIndex", etag);
        writer.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>The database's name as the cluster or this server knows it; 404 (DatabaseDoesNotExist) otherwise.</summary>
    private string RequireDatabase(string name)
    {
        if (Server.Cluster.RecordOf(name) is { } record)
        {
            return record.Name;
        }
        if (!Server.Cluster.IsClustered && Server.Databases.Names.FirstOrDefault(n => string.Equals(n, name, StringComparison.OrdinalIgnoreCase)) is { } local)
        {
            return local;
        }
        throw new DatabaseDoesNotExistException(name);
    }

    /// <summary>The configuration as stored: a JSON object whose known fields have their types (its own <c>Etag</c> dropped: the server sets it).</summary>
    private static string Check(byte[] body)
    {
        const string Example = "{\"ReadBalanceBehavior\":\"RoundRobin\",\"MaxNumberOfRequestsPerSession\":30,\"Disabled\":false}";
        JsonObject configuration;
        try
        {
            configuration = JsonNode.Parse(body) as JsonObject
                ?? throw new BadRequestException($"The body is RavenDB's ClientConfiguration, a JSON object such as {Example}.");
        }
        catch (JsonException e)
        {
            throw new BadRequestException($"The body is not valid JSON ({e.Message}); send RavenDB's ClientConfiguration, such as {Example}.");
        }
        configuration.Remove("Etag");
        if (configuration["ReadBalanceBehavior"] is { } balance
            && (balance.GetValueKind() != JsonValueKind.String || !ReadBalanceBehaviors.Contains(balance.GetValue<string>())))
        {
            throw new BadRequestException($"'ReadBalanceBehavior' is one of {string.Join(", ", ReadBalanceBehaviors)}.");
        }
        if (configuration["MaxNumberOfRequestsPerSession"] is { } max
            && (max.GetValueKind() != JsonValueKind.Number || !max.AsValue().TryGetValue<int>(out var count) || count < 1))
        {
            throw new BadRequestException("'MaxNumberOfRequestsPerSession' is a whole number of at least 1, or null.");
        }
        if (configuration["Disabled"] is { } disabled && disabled.GetValueKind() is not (JsonValueKind.True or JsonValueKind.False))
        {
            throw new BadRequestException("'Disabled' is true or false.");
        }
        return configuration.ToJsonString();
    }

    /// <summary>The stored configuration with its <c>Etag</c>, or <c>null</c>.</summary>
    private static void WriteConfiguration(Utf8JsonWriter writer, string? json, long etag)
    {
        if (json is null)
        {
            writer.WriteNullValue();
            return;
        }
        var configuration = JsonNode.Parse(json)!.AsObject();
        configuration["Etag"] = etag;
        configuration.WriteTo(writer);
    }
}
