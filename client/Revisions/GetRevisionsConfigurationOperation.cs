using System.Net;
using System.Text.Json;
using Jackdaw.Client.Json;

namespace Jackdaw.Client;

/// <summary>
/// Reads the database's revisions policy (<c>GET /databases/{db}/revisions/config</c>); null when none
/// was set. (RavenDB's client reads it from the database record; Jackdaw has no record to read.)
/// </summary>
public sealed class GetRevisionsConfigurationOperation : IMaintenanceOperation<RevisionsConfiguration?>
{
    async Task<RevisionsConfiguration?> IMaintenanceOperation<RevisionsConfiguration?>.ExecuteAsync(OperationContext context, CancellationToken token)
    {
        HttpResponseMessage response;
        try
        {
            response = await context.Executor.SendAsync(HttpMethod.Get, context.DatabasePath + "/revisions/config", null, token).ConfigureAwait(false);
        }
        catch (JackdawException e) when (e.StatusCode == HttpStatusCode.NotFound && e is not DatabaseDoesNotExistException)
        {
            return null;
        }

        using (response)
        {
            if (response.StatusCode == HttpStatusCode.NoContent)
            {
                return null;
            }

            var body = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
            return body.Length == 0 ? null : JsonSerializer.Deserialize<RevisionsConfiguration>(body, WireJson.Options);
        }
    }
}
