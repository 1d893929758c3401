using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// The tags a request on one route template is recorded with, built on first use and kept: per
/// method and status class for the request count, per method for the duration and bytes. A request
/// indexes arrays; it never builds a tag or looks up a string.
/// </summary>
internal sealed class RouteSeries(string route)
{
    /// <summary>The <c>status_class</c> label of a status code's hundreds (1 to 5), and "other" for any other.</summary>
    private static readonly string[] StatusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx", "other"];

    private static readonly string[] Methods = CreateMethods();

    private readonly KeyValuePair<string, object?>[]?[] _requests = new KeyValuePair<string, object?>[]?[Methods.Length * StatusClasses.Length];
    private readonly KeyValuePair<string, object?>[]?[] _durations = new KeyValuePair<string, object?>[]?[Methods.Length];
    private readonly string?[] _activityNames = new string?[Methods.Length];

    public string Route { get; } = route;

    public static int StatusClass(int status)
    {
        var hundreds = (uint)(status / 100) - 1;
        return hundreds < 5 ? (int)hundreds : 5;
    }

    /// <summary>The tags of <c>jackdaw.http.requests</c>: route, method and status class.</summary>
    public KeyValuePair<string, object?>[] RequestTags(HttpMethodKind method, int statusClass)
    {
        var slot = ((int)method * StatusClasses.Length) + statusClass;
        return Volatile.Read(ref _requests[slot]) ?? Create(ref _requests[slot], [new("route", Route), new("method", Methods[(int)method]), new("status_class", StatusClasses[statusClass])]);
    }

    /// <summary>The tags of the duration and byte counts: route and method.</summary>
    public KeyValuePair<string, object?>[] MethodTags(HttpMethodKind method) =>
        Volatile.Read(ref _durations[(int)method]) ?? Create(ref _durations[(int)method], [new("route", Route), new("method", Methods[(int)method])]);

    /// <summary>The name of a request's trace span, OpenTelemetry's <c>{method} {route}</c>.</summary>
    public string ActivityName(HttpMethodKind method) =>
        Volatile.Read(ref _activityNames[(int)method]) ?? (_activityNames[(int)method] = Methods[(int)method] + " " + Route);

    public static string MethodName(HttpMethodKind method) => Methods[(int)method];

    // Two threads may both build the first array of a slot: either may win, both are equal.
    private static KeyValuePair<string, object?>[] Create(ref KeyValuePair<string, object?>[]? slot, KeyValuePair<string, object?>[] tags) =>
        Interlocked.CompareExchange(ref slot, tags, null) ?? tags;

    private static string[] CreateMethods()
    {
        var names = new string[HttpMethodKinds.Count + 1];
        for (var i = 0; i < HttpMethodKinds.Count; i++)
        {
            names[i] = HttpMethodKinds.ToName((HttpMethodKind)i);
        }
        names[HttpMethodKinds.Count] = "OTHER";
        return names;
    }
}
