def load_config(text):
    import yaml

    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError("config must be a mapping")
    return {str(k): v for k, v in data.items()}
