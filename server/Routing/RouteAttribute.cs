namespace Jackdaw.Server.Routing;

/// <summary>
/// Declares that a handler method serves <paramref name="template"/> for <paramref name="method"/>.
/// Templates are ASCII: literal characters, <c>*</c> for one whole non-empty segment and <c>$</c>
/// at the end for "the rest of the path, possibly empty".
/// </summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = true, Inherited = false)]
public sealed class RouteAttribute(string template, string method) : Attribute
{
    public string Template { get; } = template;

    public string Method { get; } = method;
}
