namespace Jackdaw.Client.Tests.Infrastructure;

public enum Status
{
    Pending,
    Shipped,
    Cancelled,
}

/// <summary>An abstract base, for loads that must take the type from the stored Jackdaw-Clr-Type.</summary>
public abstract class PersonBase
{
}

public class User : PersonBase
{
    public string? Id { get; set; }

    public string Name { get; set; } = "";

    public int Age { get; set; }

    public List<string> Tags { get; set; } = [];

    public Address? Address { get; set; }
}

public class Address
{
    public string City { get; set; } = "";

    public string? Zip { get; set; }
}

public class Company
{
    public string? Id { get; set; }

    public string Name { get; set; } = "";
}

public class Order
{
    public string? Id { get; set; }

    public string Customer { get; set; } = "";

    public Status Status { get; set; }

    public DateTime OrderedAt { get; set; }

    public DateTimeOffset? ShippedAt { get; set; }

    public decimal Total { get; set; }

    public double Weight { get; set; }

    public int? Priority { get; set; }

    public Guid Reference { get; set; }

    public List<OrderLine> Lines { get; set; } = [];

    public Dictionary<string, string> Attributes { get; set; } = [];

    public ShippingInfo? Shipping { get; set; }
}

public class OrderLine
{
    public string Product { get; set; } = "";

    public int Quantity { get; set; }

    public decimal Price { get; set; }
}

public record ShippingInfo(string Carrier, Status Status, DateOnly? Expected);

public record Product(string? Id, string Name, decimal Price, Status Status);

public class Employee : User
{
    public string Department { get; set; } = "";
}

public class Widget
{
    public string? Key { get; set; }

    public string Color { get; set; } = "";
}

public class ReadOnlyId(string id)
{
    public string Id { get; } = id;

    public string Value { get; set; } = "";
}

/// <summary>Members named by attributes: the query must use the JSON names.</summary>
public class Article
{
    public string? Id { get; set; }

    [System.Text.Json.Serialization.JsonPropertyName("title")]
    public string Title { get; set; } = "";

    public string Body { get; set; } = "";

    [System.Text.Json.Serialization.JsonIgnore]
    public string Draft { get; set; } = "";

    public bool Published { get; set; }

    /// <summary>The id of a <see cref="User"/>, for includes.</summary>
    public string? Author { get; set; }
}

public sealed class OrderSummary
{
    public string? Id { get; set; }

    public string Company { get; set; } = "";

    public string? City { get; set; }
}

public sealed record CompanyCity(string Company, string City);
